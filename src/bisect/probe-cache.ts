// Probes (replays with a given prompt) are expensive: cache them by their inputs and count their cost.
import { createHash } from 'node:crypto';

/** The outcome of one replay with a prompt. */
export interface ProbeOutcome {
  ok: boolean;
  /** What the probe cost (from the ledger), in the ledger's currency. */
  cost?: number;
  recordingDir?: string;
  /** Why it failed, when known. */
  reason?: string;
  /**
   * The replay was stopped by its watchdog: neither a pass nor a fail (ok is false, but a search
   * skips it, as `git bisect skip`), and never cached, so a longer limit runs it again.
   */
  timedOut?: boolean;
}

export type ProbeFn = (promptText: string) => Promise<ProbeOutcome>;

/** Where cached outcomes live between runs (the CLI uses a folder; tests use memory). */
export interface ProbeStore {
  get(key: string): ProbeOutcome | undefined;
  set(key: string, outcome: ProbeOutcome): void;
}

export interface ProbeStats {
  /** Replays actually run. */
  replays: number;
  /** Probes answered from the cache. */
  cacheHits: number;
  /** Cost of the replays run now (cached ones cost nothing again). */
  cost: number;
}

/**
 * The cache key of a probe: sha256 of the recording id, the prompt text and what judges the replay
 * (`judge`, e.g. "predicate:all" or a contract's hash), so a different verdict rule replays again.
 */
export function probeKey(recordingId: string, promptText: string, judge = ''): string {
  return createHash('sha256')
    .update(recordingId)
    .update('\0')
    .update(judge)
    .update('\0')
    .update(promptText)
    .digest('hex');
}

/** Wraps a probe with a cache keyed by (recording id, prompt) and counts replays, hits and cost. */
export function cachedProbe(
  probe: ProbeFn,
  recordingId: string,
  store: ProbeStore = memoryStore(),
  judge = '',
): { probe: ProbeFn; stats: ProbeStats } {
  const stats: ProbeStats = { replays: 0, cacheHits: 0, cost: 0 };
  const inFlight = new Map<string, Promise<ProbeOutcome>>();
  return {
    stats,
    probe: async (promptText) => {
      const key = probeKey(recordingId, promptText, judge);
      const cached = store.get(key);
      if (cached) {
        stats.cacheHits++;
        return cached;
      }
      const pending = inFlight.get(key);
      if (pending) {
        stats.cacheHits++;
        return pending;
      }
      const run = (async () => {
        stats.replays++;
        const outcome = await probe(promptText);
        stats.cost += outcome.cost ?? 0;
        if (!outcome.timedOut) store.set(key, outcome);
        return outcome;
      })();
      inFlight.set(key, run);
      try {
        return await run;
      } finally {
        inFlight.delete(key);
      }
    },
  };
}

export function memoryStore(): ProbeStore {
  const map = new Map<string, ProbeOutcome>();
  return { get: (k) => map.get(k), set: (k, v) => void map.set(k, v) };
}
