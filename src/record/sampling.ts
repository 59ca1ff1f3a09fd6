// Which runs are recorded: a rate (decided when the run starts, so an unsampled run costs
// nothing) and rules decided when it ends (keep the runs that failed, were slow, or carry a
// tag). With rules, every run is recorded and the ones no rule (and not the rate) keeps are
// discarded at the end.
import * as z from 'zod';
import { TapedeckError } from '../recording/index.js';

export const SamplingRulesSchema = z
  .object({
    /** Fraction of runs kept whatever happens, 0..1 (default 0 when a rule is given, else 1). */
    rate: z.number().min(0).max(1).optional(),
    /** Keep every run that failed (fn threw; in a server adapter also a 5xx answer). */
    errors: z.boolean().optional(),
    /** Keep every run that took at least this many milliseconds. */
    slowMs: z.number().nonnegative().optional(),
    /** Keep every run tagged (ctx.tag) with one of these. */
    tags: z.array(z.string().min(1)).optional(),
  })
  .strict();

/** A rate (0..1), or rules: `{ rate: 0.01, errors: true, slowMs: 30_000, tags: ['vip'] }`. */
export type SampleOption = number | z.infer<typeof SamplingRulesSchema>;

export interface RunOutcome {
  failed: boolean;
  durationMs: number;
  tags: ReadonlySet<string>;
}

export interface Sampling {
  /** Whether to record the run at all (false: it just runs). */
  start(): boolean;
  /** Whether to keep the recording of a run that was recorded. */
  keep(outcome: RunOutcome): boolean;
}

/** The sampling decisions for one run. Throws a TapedeckError for a bad option. */
export function samplingOf(sample: SampleOption | undefined): Sampling {
  if (sample === undefined || typeof sample === 'number') {
    if (sample !== undefined && !(sample >= 0 && sample <= 1)) {
      throw new TapedeckError('BAD_OPTION', `record(): sample must be a fraction between 0 and 1, got ${sample}`);
    }
    return { start: () => shouldSample(sample), keep: () => true };
  }
  const parsed = SamplingRulesSchema.safeParse(sample);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'BAD_OPTION',
      `record(): sample.${issue?.path.join('.') || '(rules)'}: ${issue?.message ?? 'invalid'} (expected { rate?, errors?, slowMs?, tags? })`,
    );
  }
  const rules = parsed.data;
  const ruled = rules.errors === true || rules.slowMs !== undefined || (rules.tags?.length ?? 0) > 0;
  if (!ruled) return samplingOf(rules.rate ?? 1);
  // The rate's draw does not look at the outcome: it keeps an unbiased share of all runs.
  return {
    start: () => true,
    keep(outcome) {
      if (shouldSample(rules.rate ?? 0)) return true;
      if (rules.errors === true && outcome.failed) return true;
      if (rules.slowMs !== undefined && outcome.durationMs >= rules.slowMs) return true;
      return (rules.tags ?? []).some((tag) => outcome.tags.has(tag));
    },
  };
}

// The process's own Math.random, taken before any recorder patches it: a sampling draw is not
// one of the agent's values.
const random = Math.random;

export function shouldSample(sample: number | undefined): boolean {
  if (sample === undefined || sample >= 1) return true;
  if (!(sample > 0)) return false;
  return random() < sample;
}
