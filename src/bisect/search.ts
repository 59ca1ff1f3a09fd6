// Binary search for the first bad step (or version): at most ceil(log2 N)+1 evaluations, skips probed around.
import type { Verdict } from './predicate.js';

/** One evaluation on the search path. */
export interface Probe<R> {
  at: number;
  verdict: Verdict;
  result: R;
}

export interface SearchOptions<R> {
  /** Highest index known good (the search starts above it). Default: low - 1 of the range, i.e. nothing assumed. */
  good?: number;
  /** Index known bad (not evaluated again). Default: `high` is evaluated first. */
  bad?: number;
  onProbe?: (probe: Probe<R>, state: { good: number; bad: number | undefined; evaluations: number }) => void;
}

export interface SearchResult<R> {
  /** The first bad index, or undefined when the highest index is good. */
  firstBad?: number;
  /** When skipped indexes hide the boundary: every index that may be the first bad one. */
  candidates: number[];
  lastGood: number;
  path: Array<Probe<R>>;
  evaluations: number;
  /** ceil(log2 N) + 1 for N candidates: the bound when nothing is skipped. */
  maxEvaluations: number;
}

/** The evaluation bound for N candidates: ceil(log2 N) + 1. */
export function evaluationBound(n: number): number {
  return n <= 1 ? 1 : Math.ceil(Math.log2(n)) + 1;
}

/**
 * Finds the first index in low..high whose verdict is bad, assuming verdicts are monotone (good…good bad…bad).
 * `high` is probed first (is there anything to find?), then the interval is halved. A `skip` verdict
 * marks an index untestable and the nearest untested neighbour is probed instead, as `git bisect skip` does.
 */
export async function bisectRange<R>(
  low: number,
  high: number,
  evaluate: (at: number) => Promise<{ verdict: Verdict; result: R }>,
  options: SearchOptions<R> = {},
): Promise<SearchResult<R>> {
  const path: Array<Probe<R>> = [];
  const skipped = new Set<number>();
  let good = options.good ?? low - 1;
  let bad = options.bad;
  const probe = async (at: number): Promise<Verdict> => {
    const { verdict, result } = await evaluate(at);
    const p = { at, verdict, result };
    path.push(p);
    if (verdict === 'skip') skipped.add(at);
    else if (verdict === 'bad') bad = bad === undefined ? at : Math.min(bad, at);
    else good = Math.max(good, at);
    options.onProbe?.(p, { good, bad, evaluations: path.length });
    return verdict;
  };
  const bound = evaluationBound(high - (options.good ?? low - 1));
  if (bad === undefined) {
    // Is the end bad at all? Walk down past skipped ends.
    for (let at = high; at > good; at--) {
      const verdict = await probe(at);
      if (verdict !== 'skip') break;
    }
    if (bad === undefined) {
      return { candidates: [], lastGood: good, path, evaluations: path.length, maxEvaluations: bound };
    }
  }
  while ((bad as number) - good > 1) {
    const next = pickProbe(good, bad as number, skipped);
    if (next === undefined) break;
    await probe(next);
  }
  const candidates: number[] = [];
  for (let at = good + 1; at <= (bad as number); at++) candidates.push(at);
  return {
    firstBad: candidates.length === 1 ? candidates[0] : undefined,
    candidates,
    lastGood: good,
    path,
    evaluations: path.length,
    maxEvaluations: bound,
  };
}

/** The midpoint of (good, bad), or the nearest index to it that was not skipped. */
function pickProbe(good: number, bad: number, skipped: Set<number>): number | undefined {
  const mid = Math.floor((good + bad) / 2);
  for (let d = 0; d < bad - good; d++) {
    for (const at of [mid + d, mid - d]) {
      if (at > good && at < bad && !skipped.has(at)) return at;
    }
  }
  return undefined;
}
