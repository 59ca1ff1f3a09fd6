// Plain-text rendering of a ledger for the terminal: steps, totals, by state, metrics, conclusion.
import type { CostDelta } from './compare.js';
import { formatPercent as pct } from './metrics.js';
import { formatMoney } from './profile.js';
import type { Ledger } from './types.js';

/** 1234567 -> '1,234,567', as toLocaleString('en-US') prints it, without loading ICU's locale data (~10 ms). */
const int = (n: number): string =>
  Number.isSafeInteger(n) ? String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',') : n.toLocaleString('en-US');
const steps = (n: number): string => `${n} step${n === 1 ? '' : 's'}`;
const money = (n: number): string => (n === 0 ? '0' : n >= 1 ? n.toFixed(2) : Number(n.toPrecision(4)).toString());

function table(rows: string[][], rightAligned: ReadonlySet<number>): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A paragraph wrapped at word boundaries to `width` columns. */
function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Column indexes after removing column `removed`. */
function shiftLeft(columns: ReadonlySet<number>, removed: number): Set<number> {
  return new Set([...columns].filter((i) => i !== removed).map((i) => (i > removed ? i - 1 : i)));
}

/** The ledger as a readable report (what `tapedeck ledger` prints). */
export function formatLedger(ledger: Ledger, title?: string): string {
  const out: string[] = [];
  const recost = ledger.recostModel ? `, every call re-costed as ${ledger.recostModel}` : '';
  const name = title ?? ledger.recordingId;
  // Name and trace id share a line when they fit 80 columns.
  const traceLine = `trace ${ledger.traceId}`;
  if (name.length + 2 + traceLine.length <= 80) out.push(`${name}  ${traceLine}`);
  else out.push(name, traceLine);
  out.push(`prices ${ledger.priceVersion} (${ledger.priceSource}), ${ledger.currency}${recost}`);
  out.push('');
  const isReplay = ledger.replay !== null;
  // A model step is named after its model: the model column only says more when one differs or is unpriced.
  const showModel = ledger.detail.some((s) => s.model !== null && (s.model !== s.name || !s.isPriced));
  const head = ['step', 'state', 'name', 'model', 'uncached', 'cache rd', 'cache wr', 'output', 'reason', 'cost', 'ms'];
  if (isReplay) head.push('served', 'recorded', 'replay', 'live');
  const rows: string[][] = [head];
  for (const s of ledger.detail) {
    const row = [
      String(s.stepId),
      s.stateType,
      s.name.length > 28 ? `${s.name.slice(0, 27)}…` : s.name,
      s.model ? (s.isPriced ? s.model : `${s.model}?`) : '',
      ...(s.usageKnown
        ? [
            int(s.tokens.uncachedInput),
            int(s.tokens.cacheRead),
            int(s.tokens.cacheWrite),
            int(s.tokens.output),
            int(s.tokens.reasoning),
            money(s.cost),
          ]
        : s.usageEstimated && s.inputKnown
          ? [
              int(s.tokens.uncachedInput),
              int(s.tokens.cacheRead),
              int(s.tokens.cacheWrite),
              `~${int(s.tokens.output)}`,
              int(s.tokens.reasoning),
              `~${money(s.cost)}`,
            ]
          : s.usageEstimated
            ? [`~${int(s.tokens.uncachedInput)}`, '?', '?', `~${int(s.tokens.output)}`, '?', `~${money(s.cost)}`]
            : ['?', '?', '?', '?', '?', s.cost > 0 ? `${money(s.cost)}+?` : '?']),
      s.latencyMs === null ? '' : int(Math.round(s.latencyMs)),
    ];
    if (isReplay) row.push(s.servedFrom ?? '', money(s.recordedCost), money(s.replayCost), money(s.liveCost));
    rows.push(row);
  }
  const t = ledger.totals.tokens;
  // The ms column sums to the time inside steps; the run's wall clock is printed under the table.
  const stepMs = ledger.detail.reduce((n, s) => n + (s.latencyMs ?? 0), 0);
  // Totals holding an estimate are one: marked `~` like the estimated steps.
  const estimated = ledger.detail.filter((s) => s.usageEstimated).map((s) => s.stepId);
  const approx = estimated.length > 0 ? '~' : '';
  // A stream cut before its final usage has its input counted by the provider: only its output is estimated.
  const inputEstimated = ledger.detail.filter((s) => s.usageEstimated && !s.inputKnown).map((s) => s.stepId);
  const cut = ledger.detail.filter((s) => s.usageEstimated && s.inputKnown).map((s) => s.stepId);
  const approxInput = inputEstimated.length > 0 ? '~' : '';
  const total = [
    'total',
    '',
    steps(ledger.steps.length),
    '',
    `${approxInput}${int(t.uncachedInput)}`,
    int(t.cacheRead),
    int(t.cacheWrite),
    `${approx}${int(t.output)}`,
    int(t.reasoning),
    `${approx}${money(ledger.totals.cost)}`,
    int(Math.round(stepMs)),
  ];
  if (ledger.replay) {
    total.push('', money(ledger.replay.recordedCost), money(ledger.replay.replayCost), money(ledger.replay.liveCost));
  }
  rows.push(total);
  const right = new Set([0, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14]);
  out.push(
    table(showModel ? rows : rows.map((r) => r.filter((_, i) => i !== 3)), showModel ? right : shiftLeft(right, 3)),
  );
  out.push('');
  if (ledger.run.total_latency_ms !== null)
    out.push(
      `latency: ${int(Math.round(stepMs))} ms in steps, ${int(ledger.run.total_latency_ms)} ms wall clock for the run`,
    );
  const seed = ledger.totals.seed;
  out.push(
    `tokens: ${approx}${int(seed.total_tokens)} total = ${int(seed.input_tokens_total)} input + ${int(seed.output_tokens)} output + ${int(seed.reasoning_tokens)} reasoning`,
    `        input = ${int(seed.input_tokens_uncached)} uncached (incl. ${int(seed.input_tokens_cache_write)} cache-write${t.cacheWrite1h ? `, ${int(t.cacheWrite1h)} of it kept 1 hour` : ''}) + ${int(seed.input_tokens_cached)} cached`,
  );
  if (inputEstimated.length > 0)
    out.push(
      `        estimated: step${inputEstimated.length === 1 ? '' : 's'} ${inputEstimated.join(', ')} (no usage reported; their tokens and cost are counted locally with o200k, an estimate)`,
    );
  if (cut.length > 0)
    out.push(
      `        estimated: output of step${cut.length === 1 ? '' : 's'} ${cut.join(', ')} (stream ended without its final usage; what reached the agent, counted with o200k: the model may have written more)`,
    );
  const unknown = ledger.detail.filter((s) => !s.usageKnown && !s.usageEstimated).map((s) => s.stepId);
  if (unknown.length > 0)
    out.push(
      `        not counted: step${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} (no usage reported; tokens and cost unknown)`,
    );
  out.push(
    `cost:   ${approx}${formatMoney(ledger.run.total_cost, ledger.currency)} = LLM ${money(ledger.run.total_llm_cost)} + tools ${money(ledger.run.total_tool_cost)} + compute ${money(ledger.run.total_compute_cost)}`,
  );
  const serverTools = ledger.totals.serverTools;
  if (serverTools.length > 0)
    out.push(
      `        tools include the provider's own: ${serverTools
        .map((t) => `${t.tool} ×${int(t.uses)} ${t.priced ? money(t.cost) : 'no price'}`)
        .join(', ')}`,
    );
  out.push('');
  out.push('by state');
  const stateRows: string[][] = [['state', 'steps', 'tokens', 'cost', 'share', 'ms']];
  for (const [state, s] of Object.entries(ledger.byState).sort((a, b) => b[1].cost - a[1].cost)) {
    stateRows.push([
      state,
      String(s.steps),
      int(s.totalTokens),
      money(s.cost),
      pct(s.share),
      int(Math.round(s.latencyMs)),
    ]);
  }
  out.push(table(stateRows, new Set([1, 2, 3, 4, 5])));
  out.push('');
  const m = ledger.metrics;
  const ratio = (r: number | null): string => (r === null ? '—' : r.toFixed(3));
  out.push('metrics');
  out.push(
    table(
      [
        ['cache hit ratio', pct(m.cacheHitRatio)],
        ['cache saving', formatMoney(m.cacheSaving, ledger.currency)],
        ['input amplification', m.inputAmplification === null ? '—' : `${m.inputAmplification.toFixed(1)}×`],
        ['tool context ratio', ratio(m.toolContextRatio)],
        ['retrieval compression', ratio(m.retrievalCompression)],
        ['validation repair rate', ratio(m.validationRepairRate)],
        ['refinement efficiency', ratio(m.refinementEfficiency)],
        ['main cost sources', ledger.mainCostSources.join(', ') || '—'],
      ],
      new Set(),
    ),
  );
  if (ledger.replay) {
    out.push('');
    const r = ledger.replay;
    out.push(
      ...wrapText(
        `replay of ${r.replayOf}: ${steps(r.steps.recording)} served from the recording (recorded cost ${money(r.recordedCost)}), ${r.steps.live} live (${money(r.liveCost)}), ${[
          r.steps.sandbox ? `${r.steps.sandbox} from sandbox services, ` : '',
          r.steps.mock ? `${r.steps.mock} mocked, ` : '',
          r.steps.simulated ? `${r.steps.simulated} simulated, ` : '',
        ].join('')}${r.steps.blocked} held back; this replay spent ${formatMoney(r.replayCost, ledger.currency)}`,
        80,
      ),
    );
  }
  out.push('');
  out.push(...wrapText(ledger.costProfile.conclusion, 80));
  for (const w of ledger.warnings) out.push(`warning: ${w}`);
  return out.join('\n');
}

/** The baseline-vs-replay delta as text. */
export function formatCostDelta(delta: CostDelta): string {
  const sign = (n: number): string => (n > 0 ? `+${money(n)}` : n < 0 ? `-${money(-n)}` : '0');
  const rows: string[][] = [['', 'baseline', 'replay', 'delta']];
  rows.push(['cost', money(delta.baseline.cost), money(delta.replay.cost), sign(delta.delta.cost)]);
  rows.push([
    'tokens',
    int(delta.baseline.totalTokens),
    int(delta.replay.totalTokens),
    (delta.delta.totalTokens >= 0 ? '+' : '') + int(delta.delta.totalTokens),
  ]);
  rows.push([
    'steps',
    String(delta.baseline.steps),
    String(delta.replay.steps),
    String(delta.replay.steps - delta.baseline.steps),
  ]);
  for (const [state, s] of Object.entries(delta.byState))
    rows.push([`  ${state}`, money(s.baseline), money(s.replay), sign(s.delta)]);
  const lines = [
    `cost delta (${delta.currency})`,
    `  baseline trace ${delta.baseline.traceId}`,
    `  replay   trace ${delta.replay.traceId}`,
  ];
  lines.push(table(rows, new Set([1, 2, 3])));
  if (delta.delta.costRatio !== null) {
    const ratio = delta.delta.costRatio;
    const change =
      ratio === 0
        ? 'costs the same as the baseline'
        : `costs ${pct(Math.abs(ratio))} ${ratio < 0 ? 'less' : 'more'} than the baseline`;
    lines.push(
      ...wrapText(`the replay's trajectory ${change}; the replay itself spent ${money(delta.replay.spent)}`, 80),
    );
  }
  for (const w of delta.warnings) lines.push(`warning: ${w}`);
  return lines.join('\n');
}
