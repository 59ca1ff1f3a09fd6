// A Postgres job queue (pg-boss-like) in the warehouse: enqueue, claim with FOR UPDATE SKIP
// LOCKED (so concurrent workers on many machines never take the same job), complete, fail with
// retry and backoff, and reap jobs whose worker died.
import type { Warehouse } from './warehouse.js';

export type JobState = 'queued' | 'running' | 'done' | 'failed';

export interface Job {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  state: JobState;
  attempts: number;
  max_attempts: number;
  locked_by: string | null;
  error: string | null;
  result: unknown;
}

export interface EnqueueOptions {
  maxAttempts?: number;
  /** Do not run before this many seconds from now. */
  delaySeconds?: number;
}

export interface Queue {
  enqueue(kind: string, payload: Record<string, unknown>, options?: EnqueueOptions): Promise<number>;
  /** Takes the oldest ready job (of these kinds, if given) for `worker`, or null when none is ready. */
  claim(worker: string, kinds?: string[]): Promise<Job | null>;
  complete(id: number, result?: unknown): Promise<void>;
  /** Re-queues with backoff while attempts remain, else marks the job failed. */
  fail(id: number, error: string, retryDelaySeconds?: number): Promise<JobState>;
  /** Puts back jobs left running longer than `staleSeconds` (their worker died). */
  reap(staleSeconds: number): Promise<number>;
  counts(): Promise<Record<JobState, number>>;
  get(id: number): Promise<Job | null>;
}

const NOW = `(now() AT TIME ZONE 'UTC')`;

function toJob(row: Record<string, unknown>): Job {
  return {
    id: Number(row.id),
    kind: String(row.kind),
    payload: (row.payload ?? {}) as Record<string, unknown>,
    state: row.state as JobState,
    attempts: Number(row.attempts),
    max_attempts: Number(row.max_attempts),
    locked_by: (row.locked_by as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    result: row.result ?? null,
  };
}

/** The queue of a warehouse (its tables come with the warehouse's migrations). */
export function openQueue(wh: Warehouse): Queue {
  return {
    async enqueue(kind, payload, options = {}) {
      const r = await wh.query(
        `INSERT INTO tapedeck_job (kind, payload, max_attempts, run_after)
         VALUES ($1, $2::jsonb, $3, ${NOW} + make_interval(secs => $4)) RETURNING id`,
        [kind, JSON.stringify(payload), options.maxAttempts ?? 3, options.delaySeconds ?? 0],
      );
      return Number(r.rows[0]?.id);
    },
    async claim(worker, kinds) {
      const r = await wh.query(
        `UPDATE tapedeck_job SET state = 'running', attempts = attempts + 1, locked_by = $1, locked_at = ${NOW}
         WHERE id = (
           SELECT id FROM tapedeck_job
           WHERE state = 'queued' AND run_after <= ${NOW} AND ($2::text[] IS NULL OR kind = ANY($2::text[]))
           ORDER BY run_after, id
           FOR UPDATE SKIP LOCKED
           LIMIT 1)
         RETURNING *`,
        [worker, kinds && kinds.length > 0 ? kinds : null],
      );
      const row = r.rows[0];
      return row ? toJob(row) : null;
    },
    async complete(id, result) {
      await wh.query(
        `UPDATE tapedeck_job SET state = 'done', result = $2::jsonb, error = NULL, finished_at = ${NOW} WHERE id = $1`,
        [id, JSON.stringify(result ?? null)],
      );
    },
    async fail(id, error, retryDelaySeconds = 5) {
      const r = await wh.query(
        `UPDATE tapedeck_job SET
           state = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
           run_after = ${NOW} + make_interval(secs => $3 * attempts),
           error = $2, locked_by = NULL, locked_at = NULL,
           finished_at = CASE WHEN attempts < max_attempts THEN NULL ELSE ${NOW} END
         WHERE id = $1 RETURNING state`,
        [id, error, retryDelaySeconds],
      );
      return (r.rows[0]?.state as JobState | undefined) ?? 'failed';
    },
    async reap(staleSeconds) {
      const r = await wh.query(
        `UPDATE tapedeck_job SET state = 'queued', locked_by = NULL, locked_at = NULL
         WHERE state = 'running' AND locked_at < ${NOW} - make_interval(secs => $1) RETURNING id`,
        [staleSeconds],
      );
      return r.rows.length;
    },
    async counts() {
      const r = await wh.query('SELECT state, count(*) AS n FROM tapedeck_job GROUP BY state');
      const out: Record<JobState, number> = { queued: 0, running: 0, done: 0, failed: 0 };
      for (const row of r.rows) out[row.state as JobState] = Number(row.n);
      return out;
    },
    async get(id) {
      const r = await wh.query('SELECT * FROM tapedeck_job WHERE id = $1', [id]);
      const row = r.rows[0];
      return row ? toJob(row) : null;
    },
  };
}

export interface WorkerOptions {
  /** A name for this worker (default host:pid). */
  name?: string;
  kinds?: string[];
  /** Stop when no job is ready instead of polling. */
  once?: boolean;
  pollMs?: number;
  /** Reap jobs running longer than this (default 15 min). */
  staleSeconds?: number;
  signal?: AbortSignal;
  onJob?: (event: { job: Job; outcome: 'done' | 'retry' | 'failed'; error?: string; ms: number }) => void;
}

export type JobHandler = (job: Job) => Promise<unknown>;

/** Runs jobs one at a time until stopped (or, with `once`, until none is ready). Returns how many ran. */
export async function runWorker(
  queue: Queue,
  handlers: Record<string, JobHandler>,
  options: WorkerOptions = {},
): Promise<number> {
  const name = options.name ?? `${process.env.HOSTNAME ?? 'worker'}:${process.pid}`;
  const kinds = options.kinds ?? Object.keys(handlers);
  let ran = 0;
  await queue.reap(options.staleSeconds ?? 900);
  while (!options.signal?.aborted) {
    const job = await queue.claim(name, kinds);
    if (!job) {
      if (options.once) break;
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
      continue;
    }
    const t0 = performance.now();
    const handler = handlers[job.kind];
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      const result = await handler(job);
      await queue.complete(job.id, result);
      options.onJob?.({ job, outcome: 'done', ms: performance.now() - t0 });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const state = await queue.fail(job.id, message);
      options.onJob?.({
        job,
        outcome: state === 'failed' ? 'failed' : 'retry',
        error: message,
        ms: performance.now() - t0,
      });
    }
    ran++;
  }
  return ran;
}
