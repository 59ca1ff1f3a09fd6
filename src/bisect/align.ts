// Run vs run: align two trajectories by edit distance over normalised actions; find where they part.
import type { Recording } from '../recording/index.js';
import { canonicalJson, isTelemetry, jsonOrText } from '../recording/index.js';
import { describeAction } from './bisect-belief.js';
import { listSteps, type StepView } from './view.js';

/** A step reduced to what decides equality: the tool and its canonical arguments, or a model's tool-call decision. */
export interface NormalisedAction {
  step: number;
  kind: 'tool' | 'model';
  /** Tool name, or for a model step the names of the tools it decided to call ('(final)' for an answer). */
  name: string;
  /** Canonical arguments (JSON text). */
  args: string;
  line: string;
}

export type DivergenceKind = 'other-tool' | 'other-arguments' | 'extra-step' | 'missing-step';

export type AlignmentOp =
  | { op: 'match'; a: NormalisedAction; b: NormalisedAction }
  | { op: 'substitute'; kind: 'other-tool' | 'other-arguments'; a: NormalisedAction; b: NormalisedAction }
  | { op: 'delete'; kind: 'missing-step'; a: NormalisedAction }
  | { op: 'insert'; kind: 'extra-step'; b: NormalisedAction };

export interface RunAlignment {
  a: { recording: string; steps: number };
  b: { recording: string; steps: number };
  distance: number;
  /** 1 - distance / max(len a, len b); 1 for two empty runs. */
  similarity: number;
  /** The first place the runs part, by the alignment; absent when identical. */
  firstDivergence?: {
    kind: DivergenceKind;
    /** The step of `a` (missing in b, or replaced), and of `b` (extra, or replacing). */
    stepA?: number;
    stepB?: number;
  };
  ops: AlignmentOp[];
}

/**
 * The normalised actions of a recording (tool steps and model steps, in step order). The agent's
 * telemetry is not an action: a tracer that batched differently does not part two runs.
 */
export function normaliseActions(recording: Recording): NormalisedAction[] {
  return listSteps(recording)
    .filter((view) => view.exchange === undefined || !isTelemetry(view.exchange.request))
    .map(normaliseStep);
}

function normaliseStep(view: StepView): NormalisedAction {
  if (view.tool) {
    return {
      step: view.step,
      kind: 'tool',
      name: view.name,
      args: canonicalJson(jsonOrText(view.tool.args)),
      line: describeAction(view),
    };
  }
  if (view.model) {
    const calls = view.model.output.toolCalls;
    const name = calls.length === 0 ? '(final)' : calls.map((c) => c.name).join('+');
    const args = canonicalJson(calls.map((c) => jsonOrText(c.arguments)));
    return { step: view.step, kind: 'model', name, args, line: describeAction(view) };
  }
  // A step with only world changes (a direct database write): the step's name stands for the action.
  return {
    step: view.step,
    kind: 'tool',
    name: `${view.stateType} ${view.name}`,
    args: '',
    line: describeAction(view),
  };
}

/**
 * Whether two actions use the same tools: a model step's decision by the tools it called, however
 * many times each (`restock+restock` and `restock`: the same tool, other calls of it).
 */
function sameTools(x: NormalisedAction, y: NormalisedAction): boolean {
  if (x.name === y.name) return true;
  if (x.kind !== 'model') return false;
  const tools = (a: NormalisedAction) => [...new Set(a.name.split('+'))].sort().join('+');
  return tools(x) === tools(y);
}

const same = (x: NormalisedAction, y: NormalisedAction): boolean =>
  x.kind === y.kind && x.name === y.name && x.args === y.args;

/** Levenshtein distance over two action lists with the alignment that realises it, earliest divergence first. */
export function alignActions(a: NormalisedAction[], b: NormalisedAction[]): { distance: number; ops: AlignmentOp[] } {
  const n = a.length;
  const m = b.length;
  // d[i][j] = distance between the suffixes a[i..] and b[j..], so the walk from (0,0) goes forward in time.
  const d: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n; i >= 0; i--) {
    for (let j = m; j >= 0; j--) {
      if (i === n) d[i]![j] = m - j;
      else if (j === m) d[i]![j] = n - i;
      else {
        const cost = same(a[i]!, b[j]!) ? 0 : 1;
        d[i]![j] = Math.min(d[i + 1]![j + 1]! + cost, d[i + 1]![j]! + 1, d[i]![j + 1]! + 1);
      }
    }
  }
  const ops: AlignmentOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    const here = d[i]![j]!;
    const x = a[i];
    const y = b[j];
    if (x && y && same(x, y) && here === d[i + 1]![j + 1]) {
      ops.push({ op: 'match', a: x, b: y });
      i++;
      j++;
    } else if (x && y && here === d[i + 1]![j + 1]! + 1) {
      const kind = x.kind === y.kind && sameTools(x, y) ? 'other-arguments' : 'other-tool';
      ops.push({ op: 'substitute', kind, a: x, b: y });
      i++;
      j++;
    } else if (x && here === d[i + 1]![j]! + 1) {
      ops.push({ op: 'delete', kind: 'missing-step', a: x });
      i++;
    } else if (y) {
      ops.push({ op: 'insert', kind: 'extra-step', b: y });
      j++;
    } else break;
  }
  return { distance: d[0]![0]!, ops };
}

/** Aligns two runs (say, a baseline and its replay) and reports the first divergent step and its kind. */
export function alignRuns(a: Recording, b: Recording): RunAlignment {
  const actionsA = normaliseActions(a);
  const actionsB = normaliseActions(b);
  const { distance, ops } = alignActions(actionsA, actionsB);
  const longest = Math.max(actionsA.length, actionsB.length);
  const result: RunAlignment = {
    a: { recording: a.dir, steps: actionsA.length },
    b: { recording: b.dir, steps: actionsB.length },
    distance,
    similarity: longest === 0 ? 1 : 1 - distance / longest,
    ops,
  };
  const first = ops.find((op) => op.op !== 'match');
  if (first) {
    if (first.op === 'substitute')
      result.firstDivergence = { kind: first.kind, stepA: first.a.step, stepB: first.b.step };
    else if (first.op === 'delete') result.firstDivergence = { kind: first.kind, stepA: first.a.step };
    else if (first.op === 'insert') result.firstDivergence = { kind: first.kind, stepB: first.b.step };
  }
  return result;
}

/** A side-by-side text view of two steps (either may be absent), `width` columns each. */
export function sideBySide(left: string[], right: string[], width = 58, titles: [string, string] = ['a', 'b']): string {
  const wrap = (lines: string[]): string[] =>
    lines.flatMap((line) => {
      const out: string[] = [];
      for (let s = line; ; s = s.slice(width)) {
        out.push(s.slice(0, width));
        if (s.length <= width) break;
      }
      return out;
    });
  const l = wrap(left);
  const r = wrap(right);
  const rows = [`${titles[0].padEnd(width)} | ${titles[1]}`, `${'-'.repeat(width)}-+-${'-'.repeat(width)}`];
  for (let k = 0; k < Math.max(l.length, r.length); k++) rows.push(`${(l[k] ?? '').padEnd(width)} | ${r[k] ?? ''}`);
  return rows.join('\n');
}
