// Baseline and replay side by side, step against aligned step, with the first divergent step
// marked » (and highlighted when colour is on), and each replay step's answer provenance.
import { PROVENANCE_MARKS } from '../../src/recording/index.js';
import type { AlignmentView } from '../data/engines.js';
import { clip, clipRight } from '../data/format.js';
import type { StepIndex, StepRow } from '../data/steps.js';
import { type Line, seg } from './lines.js';

/** What the agent did at a step, comparable across runs: state type, tool or model, and its arguments. */
export function actionOf(index: StepIndex, stepId: number): string {
  const row = index.rows[index.positionOf.get(stepId) ?? -1];
  if (!row) return '';
  let detail = '';
  for (const e of index.eventsOf.get(stepId) ?? []) {
    if (e.type === 'tool.called') detail = JSON.stringify(e.payload.args);
    if (e.type === 'model.called')
      detail = e.payload.output.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(';') || 'answer';
  }
  return `${row.stateType}|${row.name}|${detail}`;
}

/**
 * Used when the bisect engine's alignRuns is not available: pairs steps by position and calls
 * the first pair whose actions differ (or that carries a replay divergence) the first divergence.
 */
export function alignByPosition(baseline: StepIndex, replay: StepIndex): AlignmentView {
  const n = Math.max(baseline.rows.length, replay.rows.length);
  const pairs: AlignmentView['pairs'] = [];
  let first: AlignmentView['firstDivergence'];
  for (let i = 0; i < n; i++) {
    const a = baseline.rows[i];
    const b = replay.rows[i];
    const same = !!a && !!b && b.divergences === 0 && actionOf(baseline, a.stepId) === actionOf(replay, b.stepId);
    const pair: AlignmentView['pairs'][number] = { same };
    if (a) pair.baseline = a.stepId;
    if (b) pair.replay = b.stepId;
    pairs.push(pair);
    if (first) continue;
    if (same) continue;
    if (!a || !b) {
      first = { kind: a ? 'missing step' : 'extra step' };
      if (a) first.baseline = a.stepId;
      if (b) first.replay = b.stepId;
    } else {
      const kind = a.name !== b.name ? 'different tool' : b.divergences > 0 ? 'divergence' : 'different arguments';
      first = { baseline: a.stepId, replay: b.stepId, kind };
    }
  }
  const view: AlignmentView = { pairs };
  if (first) view.firstDivergence = first;
  return view;
}

/** Index in `pairs` of the first divergence. */
export function firstDivergentPair(alignment: AlignmentView): number {
  const fd = alignment.firstDivergence;
  if (!fd) return -1;
  return alignment.pairs.findIndex(
    (p) =>
      (fd.baseline === undefined || p.baseline === fd.baseline) && (fd.replay === undefined || p.replay === fd.replay),
  );
}

/** What a step did, shortly: the tool calls a model step decided, or a tool step's arguments. */
export function actionSummary(index: StepIndex, stepId: number): string {
  for (const e of index.eventsOf.get(stepId) ?? []) {
    if (e.type === 'model.called') {
      const calls = e.payload.output.toolCalls.map((c) => `→ ${c.name}`).join(' ');
      return calls || '→ answer';
    }
    if (e.type === 'tool.called') return JSON.stringify(e.payload.args) ?? '';
  }
  return '';
}

function cell(index: StepIndex, row: StepRow | undefined, width: number): string {
  if (!row) return clip('  (no step)', width);
  // A replay's step says where its answer came from: rec, sbx, mock, sim, live, held.
  const from = row.servedFrom ? `${PROVENANCE_MARKS[row.servedFrom].padEnd(4)} ` : '';
  return clip(
    `${clipRight(String(row.stepId), 4)} ${from}${clip(row.stateType, 9)} ${row.name} ${actionSummary(index, row.stepId)}`,
    width,
  );
}

export function sideBySideLines(
  baseline: StepIndex,
  replay: StepIndex,
  alignment: AlignmentView,
  offset: number,
  height: number,
  width: number,
): Line[] {
  const half = Math.max(10, Math.floor((width - 3) / 2));
  const first = firstDivergentPair(alignment);
  const lines: Line[] = [
    [seg(` ${clip('baseline', half)}│ ${clip('replay', half - 1)}`, { bold: true, tint: 'muted' })],
  ];
  for (const [i, pair] of alignment.pairs.slice(offset, offset + Math.max(0, height - 1)).entries()) {
    const at = offset + i;
    const a = pair.baseline === undefined ? undefined : baseline.rows[baseline.positionOf.get(pair.baseline) ?? -1];
    const b = pair.replay === undefined ? undefined : replay.rows[replay.positionOf.get(pair.replay) ?? -1];
    const differs = !a || !b || (b.divergences ?? 0) > 0 || actionOf(baseline, a.stepId) !== actionOf(replay, b.stepId);
    const mark = at === first ? '»' : differs ? '≠' : ' ';
    const text = `${mark}${cell(baseline, a, half)}│ ${cell(replay, b, half - 1)}`;
    if (at === first) lines.push([seg(text, { tint: 'diverge', inverse: true, bold: true })]);
    else lines.push([seg(text, differs ? { tint: 'warn' } : {})]);
  }
  return lines;
}
