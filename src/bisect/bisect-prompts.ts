// Prompt vs prompt: the first prompt version whose replay fails, by binary search over the versions.
import { TapedeckError } from '../recording/index.js';
import { cachedProbe, type ProbeFn, type ProbeOutcome, type ProbeStats, type ProbeStore } from './probe-cache.js';
import { bisectRange } from './search.js';

export interface PromptVersion {
  /** A file name or a git revision: how the user names this version. */
  label: string;
  text: string;
}

export interface PromptProbeEntry {
  version: number;
  label: string;
  ok: boolean;
  cached: boolean;
  cost?: number;
  recordingDir?: string;
  reason?: string;
  /** The probe's replay timed out: skipped by the search, neither pass nor fail. */
  timedOut?: boolean;
}

export interface BisectPromptsOptions {
  versions: PromptVersion[];
  /** Runs a replay with the prompt text and says whether it passed. */
  probe: ProbeFn;
  /** The recording the replays start from (part of the cache key). */
  recordingId: string;
  store?: ProbeStore;
  /** What judges a replay (part of the cache key): "predicate:all", "contract:<sha256>"… */
  judge?: string;
  /** Index (0-based) of a version known good; default: none assumed. */
  knownGood?: number;
  onProbe?: (entry: PromptProbeEntry, evaluations: number, maxEvaluations: number) => void;
}

export interface BisectPromptsResult {
  versions: number;
  /** The first version (0-based index and label) whose replay fails; absent when the last one passes. */
  firstBad?: { version: number; label: string; reason?: string; recordingDir?: string };
  /** The version just before it that passed (absent when the first version already fails). */
  lastGood?: { version: number; label: string };
  evaluations: number;
  maxEvaluations: number;
  path: PromptProbeEntry[];
  stats: ProbeStats;
  /** Versions whose replay timed out (skipped by the search), in the order probed. */
  timedOut: PromptProbeEntry[];
  /**
   * When timed-out versions hide the boundary: every version (0-based) that may be the first
   * failing one.
   */
  candidates?: number[];
}

/**
 * Finds the first of the ordered prompt versions whose replay fails, with at most ceil(log2 N)+1
 * probes: the last version is probed first, then the range is halved. Probes are cached by
 * (recording id, prompt text), so equal texts and repeated runs cost nothing.
 */
export async function bisectPrompts(options: BisectPromptsOptions): Promise<BisectPromptsResult> {
  const { versions } = options;
  if (versions.length === 0) throw new TapedeckError('BISECT_PROMPT_INPUT', 'no prompt versions given');
  const { probe, stats } = cachedProbe(options.probe, options.recordingId, options.store, options.judge);
  const path: PromptProbeEntry[] = [];
  const search = await bisectRange(
    0,
    versions.length - 1,
    async (at) => {
      const version = versions[at]!;
      const hitsBefore = stats.cacheHits;
      let outcome: ProbeOutcome;
      try {
        outcome = await probe(version.text);
      } catch (error) {
        if (error instanceof TapedeckError) throw error;
        throw new TapedeckError(
          'BISECT_PROBE_FAILED',
          `the replay for prompt version ${at + 1} (${version.label}) failed to run: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      const entry: PromptProbeEntry = {
        version: at,
        label: version.label,
        ok: outcome.ok,
        cached: stats.cacheHits > hitsBefore,
      };
      if (outcome.cost !== undefined) entry.cost = outcome.cost;
      if (outcome.recordingDir !== undefined) entry.recordingDir = outcome.recordingDir;
      if (outcome.reason !== undefined) entry.reason = outcome.reason;
      if (outcome.timedOut) entry.timedOut = true;
      path.push(entry);
      return { verdict: outcome.timedOut ? 'skip' : outcome.ok ? 'good' : 'bad', result: entry };
    },
    {
      ...(options.knownGood === undefined ? {} : { good: options.knownGood }),
      onProbe: (p, state) =>
        options.onProbe?.(p.result, state.evaluations, maxEvaluationsOf(versions.length, options.knownGood)),
    },
  );
  const result: BisectPromptsResult = {
    versions: versions.length,
    evaluations: search.evaluations,
    maxEvaluations: search.maxEvaluations,
    path,
    stats,
    timedOut: path.filter((p) => p.timedOut),
  };
  if (search.firstBad === undefined && search.candidates.length > 1) result.candidates = search.candidates;
  if (search.firstBad !== undefined) {
    const at = search.firstBad;
    const proof = path.find((p) => p.version === at);
    result.firstBad = { version: at, label: versions[at]!.label };
    if (proof?.reason !== undefined) result.firstBad.reason = proof.reason;
    if (proof?.recordingDir !== undefined) result.firstBad.recordingDir = proof.recordingDir;
    if (at > 0) result.lastGood = { version: at - 1, label: versions[at - 1]!.label };
  }
  return result;
}

function maxEvaluationsOf(n: number, knownGood: number | undefined): number {
  const span = n - 1 - (knownGood ?? -1);
  return span <= 1 ? 1 : Math.ceil(Math.log2(span)) + 1;
}
