// Text views of bisect results for people (the CLI and the TUI print these; --json prints the objects).
import type { Recording } from '../recording/index.js';
import { canonicalJson, jsonOrText } from '../recording/index.js';
import type { AlignmentOp, RunAlignment } from './align.js';
import { sideBySide } from './align.js';
import type { BisectBeliefResult, BisectProgress } from './bisect-belief.js';
import type { BisectPromptsResult, PromptProbeEntry } from './bisect-prompts.js';
import type { DdminProbe, DdminResult } from './ddmin.js';
import type { DivergenceShift } from './divergence-shift.js';
import { bodyToText, listSteps } from './view.js';

/** One progress line: "[2/4] step 5: bad — reason". */
/**
 * One progress line: verdict and range first, then the reason cut to fit `width` columns
 * (the full reason is in the result). `width` counts the caller's "bisect: " prefix.
 */
export function formatProgress(p: BisectProgress, width = 80): string {
  const range = `good ≤ ${p.good}${p.bad === undefined ? '' : `, bad ≥ ${p.bad}`}`;
  const head = `[${p.evaluation}/${p.maxEvaluations}] step ${p.step}: ${p.verdict} (${range})`;
  if (!p.reason) return head;
  const room = width - 'bisect: '.length - head.length - 3;
  const why = p.reason.length <= room ? p.reason : `${p.reason.slice(0, Math.max(10, room - 1))}…`;
  return `${head} — ${why}`;
}

export function formatBisect(result: BisectBeliefResult): string {
  const lines: string[] = [];
  lines.push(`${result.recording}: ${result.steps} steps, predicate ${result.predicate}`);
  lines.push(`search path: ${result.path.map((p) => `${p.step}:${p.verdict}`).join(' -> ') || '(none)'}`);
  lines.push(`evaluations: ${result.evaluations} (bound ceil(log2 N)+1 = ${result.maxEvaluations})`);
  if (result.firstBad) {
    const f = result.firstBad;
    lines.push(`first bad step: ${f.step} (${f.stateType} ${f.name})`);
    lines.push(`  action: ${f.action}`);
    lines.push(`  why:    ${f.reason}`);
    if (result.lastGood > 0) lines.push(`last good step: ${result.lastGood}`);
  } else if (result.candidates.length > 1) {
    lines.push(`the first bad step is one of ${result.candidates.join(', ')} (skipped steps hide the boundary)`);
  } else {
    lines.push(`no bad step: the predicate holds through step ${result.steps}`);
  }
  return lines.join('\n');
}

export function formatShift(shift: DivergenceShift): string {
  return [
    `prompt change: ${shift.verdict} — ${shift.summary}`,
    `trajectory similarity: ${shift.similarity.toFixed(2)}`,
  ].join('\n');
}

function stepLines(recording: Recording, step: number | undefined): string[] {
  if (step === undefined) return ['(no step)'];
  const view = listSteps(recording).find((s) => s.step === step);
  if (!view) return [`step ${step}: (no events)`];
  const lines = [`step ${step}  ${view.stateType}  ${view.name}${view.route ? `  (${view.route})` : ''}`];
  if (view.tool) {
    lines.push(`tool ${view.name}${view.tool.mutating ? ' (mutating)' : ''}`);
    lines.push(...JSON.stringify(view.tool.args, null, 2).split('\n'));
    if (view.exchange)
      lines.push(
        `${view.exchange.request.method} ${view.exchange.request.url} -> ${view.exchange.response?.status ?? view.exchange.error?.code ?? '?'}`,
      );
    const result =
      view.tool.result !== undefined ? canonicalJson(view.tool.result) : bodyToText(recording, view.tool.resultBody);
    if (result) lines.push(`result: ${result.slice(0, 300)}`);
  } else if (view.model) {
    const calls = view.model.output.toolCalls;
    if (calls.length === 0) lines.push(`answer: ${view.model.output.text ?? ''}`);
    for (const c of calls)
      lines.push(`calls ${c.name}`, ...JSON.stringify(jsonOrText(c.arguments), null, 2).split('\n'));
  }
  return lines;
}

const opLine = (op: AlignmentOp): string => {
  switch (op.op) {
    case 'match':
      return `  = ${op.a.step}/${op.b.step}  ${op.a.line}`;
    case 'substitute':
      return `  ~ ${op.a.step}/${op.b.step}  ${op.kind}: ${op.a.line}  =>  ${op.b.line}`;
    case 'delete':
      return `  - ${op.a.step}/-  missing in b: ${op.a.line}`;
    case 'insert':
      return `  + -/${op.b.step}  extra in b: ${op.b.line}`;
  }
};

export function formatAlignment(
  alignment: RunAlignment,
  a: Recording,
  b: Recording,
  options: { all?: boolean; width?: number } = {},
): string {
  const lines: string[] = [];
  lines.push(`a: ${alignment.a.recording} (${alignment.a.steps} actions)`);
  lines.push(`b: ${alignment.b.recording} (${alignment.b.steps} actions)`);
  lines.push(
    `edit distance ${alignment.distance}, similarity ${alignment.similarity.toFixed(2)} (1 - distance / max length)`,
  );
  const first = alignment.firstDivergence;
  if (!first) {
    lines.push('the runs take the same actions');
  } else {
    const where = [
      first.stepA === undefined ? undefined : `a step ${first.stepA}`,
      first.stepB === undefined ? undefined : `b step ${first.stepB}`,
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(`first divergence: ${first.kind} at ${where}`);
    lines.push('');
    lines.push(sideBySide(stepLines(a, first.stepA), stepLines(b, first.stepB), options.width ?? 58, ['a', 'b']));
  }
  if (options.all) {
    lines.push('', 'alignment:');
    lines.push(...alignment.ops.map(opLine));
  }
  return lines.join('\n');
}

export function formatPromptProbe(entry: PromptProbeEntry, evaluation: number, max: number): string {
  const cost = entry.cost === undefined ? '' : `, cost ${entry.cost.toFixed(4)}`;
  return `[${evaluation}/${max}] version ${entry.version + 1} (${entry.label}): ${entry.timedOut ? 'TIMED OUT (skipped)' : entry.ok ? 'pass' : 'FAIL'}${entry.cached ? ' (cached)' : ''}${cost}${entry.reason ? ` — ${entry.reason}` : ''}`;
}

export function formatPromptBisect(result: BisectPromptsResult): string {
  const lines = [`${result.versions} prompt versions; ${result.evaluations} probes (bound ${result.maxEvaluations})`];
  lines.push(
    `replays run: ${result.stats.replays}, cached: ${result.stats.cacheHits}, cost: ${result.stats.cost.toFixed(4)}`,
  );
  if (result.firstBad) {
    lines.push(`first failing version: ${result.firstBad.version + 1} (${result.firstBad.label})`);
    if (result.lastGood) lines.push(`last passing version: ${result.lastGood.version + 1} (${result.lastGood.label})`);
    if (result.firstBad.reason) lines.push(`  why: ${result.firstBad.reason}`);
    if (result.firstBad.recordingDir) lines.push(`  replay: ${result.firstBad.recordingDir}`);
  } else if (result.candidates) {
    lines.push(
      `first failing version: one of ${result.candidates.map((v) => v + 1).join(', ')} (timed-out versions hide the boundary)`,
    );
  } else if (result.timedOut.length > 0 && result.path.every((p) => p.timedOut || p.ok)) {
    const last = result.path.filter((p) => !p.timedOut).at(0);
    lines.push(
      last
        ? `no failing version among those that finished: version ${last.version + 1} passes, and the later ones timed out`
        : 'no version finished: every probe timed out',
    );
  } else {
    lines.push('no failing version: the last version passes');
  }
  for (const t of result.timedOut)
    lines.push(`  version ${t.version + 1} (${t.label}) timed out: ${t.reason ?? 'no progress'}`);
  return lines.join('\n');
}

export function formatDdminProbe(entry: DdminProbe): string {
  const cost = entry.cost === undefined ? '' : `, cost ${entry.cost.toFixed(4)}`;
  return `hunks {${entry.hunks.map((h) => h + 1).join(',')}}: ${entry.timedOut ? 'TIMED OUT (unresolved)' : entry.ok ? 'pass' : 'FAIL'}${entry.cached ? ' (cached)' : ''}${cost}`;
}

export function formatDdmin(result: DdminResult): string {
  const lines = [
    `${result.hunks.length} hunks; old prompt ${result.fromOk ? 'passes' : 'fails'}, new prompt ${result.toOk ? 'passes' : 'fails'}`,
    `probes: ${result.probes.length} (replays run: ${result.stats.replays}, cached: ${result.stats.cacheHits}, cost: ${result.stats.cost.toFixed(4)})`,
    `smallest set of hunks that flips the outcome: ${result.minimal.map((i) => i + 1).join(', ')}`,
  ];
  for (const i of result.minimal) {
    const h = result.hunks[i]!;
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@ (hunk ${i + 1})`, ...h.lines);
  }
  return lines.join('\n');
}
