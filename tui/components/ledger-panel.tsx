// The ledger and score panel: cost by state type, cache hit ratio, totals, hard gate, soft
// score and failure codes; for a replay, the baseline and the replay side by side.

import { Box } from 'ink';
import type { Available, LedgerView, ScoreView } from '../data/engines.js';
import { clip, clipRight, fmtCost, fmtPercent, fmtTokens } from '../data/format.js';
import { type Line, Lines, seg } from './lines.js';

export interface RunScores {
  label: string;
  /** undefined while loading. */
  ledger?: Available<LedgerView>;
  score?: Available<ScoreView>;
}

function state(a: Available<unknown> | undefined): string | undefined {
  if (a === undefined) return '…';
  return a.ok ? undefined : a.reason;
}

function gateLine(run: RunScores, width: number): Line[] {
  const pending = state(run.score);
  if (pending) return [[seg('hard gate ', { bold: true }), seg(clip(pending, width - 10), { tint: 'muted' })]];
  const s = (run.score as { ok: true; value: ScoreView }).value;
  const lines: Line[] = [
    [
      seg('hard gate ', { bold: true }),
      seg(s.hardSuccess ? 'PASS' : 'FAIL', { tint: s.hardSuccess ? 'good' : 'bad', bold: true }),
      seg('  soft score ', { bold: true }),
      seg(s.outcomeScore === undefined ? '—' : s.outcomeScore.toFixed(2)),
    ],
  ];
  if (s.failureReasonCodes.length > 0 || s.primaryFailureReasonCode) {
    const codes = [
      s.primaryFailureReasonCode,
      ...s.failureReasonCodes.filter((c) => c !== s.primaryFailureReasonCode),
    ].filter(Boolean);
    lines.push([seg('failures ', { bold: true }), seg(codes.join(', '), { tint: 'bad' })]);
  }
  for (const v of s.validators) {
    lines.push([
      seg(v.passed ? ' ✓ ' : ' ✗ ', { tint: v.passed ? 'good' : 'bad' }),
      seg(`${v.name}${v.score === undefined ? '' : ` ${v.score.toFixed(2)}`}${v.message ? ` — ${v.message}` : ''}`),
    ]);
  }
  return lines;
}

function ledgerLinesOf(run: RunScores, width: number): Line[] {
  const pending = state(run.ledger);
  if (pending) return [[seg('ledger ', { bold: true }), seg(pending, { tint: 'muted' })]];
  const l = (run.ledger as { ok: true; value: LedgerView }).value;
  const lines: Line[] = [
    [
      seg('total ', { bold: true }),
      seg(
        `${fmtCost(l.totalCost, l.currency)}  llm ${fmtCost(l.llmCost, l.currency)}  tool ${fmtCost(l.toolCost, l.currency)}`,
      ),
    ],
    [
      seg('tokens ', { bold: true }),
      seg(
        `in ${fmtTokens(l.inputTokens)} (cached ${fmtTokens(l.cachedInputTokens)})  out ${fmtTokens(l.outputTokens)}`,
      ),
    ],
    [seg('cache hit ', { bold: true }), seg(`${fmtPercent(l.cacheHitRatio)} of input tokens`)],
    [
      seg('cost by state type', { bold: true }),
      seg(l.mainCostState ? `  main: ${l.mainCostState}` : '', { tint: 'muted' }),
    ],
  ];
  const max = Math.max(...l.costByState.map((c) => c.cost), 0);
  const barWidth = Math.max(2, width - 28);
  for (const c of l.costByState) {
    const cells = max > 0 ? Math.max(c.cost > 0 ? 1 : 0, Math.round((c.cost / max) * barWidth)) : 0;
    lines.push([
      seg(` ${clip(c.stateType, 11)}${clipRight(fmtCost(c.cost, l.currency), 9)} ${clipRight(String(c.steps), 5)} `),
      seg('█'.repeat(cells), { tint: 'accent' }),
    ]);
  }
  return lines;
}

function runLines(run: RunScores, width: number): Line[] {
  return [
    [
      seg(`── ${run.label} `, { bold: true, tint: 'accent' }),
      seg('─'.repeat(Math.max(0, width - run.label.length - 4)), { tint: 'muted' }),
    ],
    ...gateLine(run, width),
    ...ledgerLinesOf(run, width),
  ];
}

/** The lines of one run, or of a baseline and a replay (the caller lays them side by side). */
export function ledgerPanelLines(runs: RunScores[], width: number): Line[] {
  return runs.flatMap((run) => runLines(run, width));
}

function compareLines(a: RunScores, b: RunScores): Line[] {
  if (!a.ledger?.ok || !b.ledger?.ok) return [];
  const ca = a.ledger.value.totalCost;
  const cb = b.ledger.value.totalCost;
  if (ca === undefined || cb === undefined) return [];
  const delta = cb - ca;
  return [
    [
      seg('replay vs baseline ', { bold: true }),
      seg(
        `${delta >= 0 ? '+' : ''}${fmtCost(delta, a.ledger.value.currency)} (${ca > 0 ? fmtPercent(delta / ca) : '—'})`,
      ),
    ],
  ];
}

export function LedgerPanel({ runs, width, height }: { runs: RunScores[]; width: number; height: number }) {
  if (runs.length < 2) return <Lines lines={ledgerPanelLines(runs, width)} width={width} height={height} />;
  const [a, b] = runs as [RunScores, RunScores];
  const half = Math.floor((width - 1) / 2);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Lines lines={compareLines(a, b)} width={width} />
      <Box flexDirection="row">
        <Lines lines={runLines(a, half)} width={half} height={height - 1} />
        <Box width={1} />
        <Lines lines={runLines(b, width - half - 1)} width={width - half - 1} height={height - 1} />
      </Box>
    </Box>
  );
}
