// The job queue: pg-boss on the warehouse's database (its own schema, `tapedeck_queue`). pg-boss
// gives each job to one worker (SKIP LOCKED), retries a failed job with backoff, fails a job whose
// worker died once it has been active longer than its expiry (so it is retried elsewhere), moves
// jobs out of retries to a dead-letter queue, and keeps at most one job per singleton key waiting
// and one running (a sweep's probe also checks the warehouse before it runs, so an answered probe
// never runs again). pg-boss talks to the database through the warehouse's own
// connection: a Postgres server (many workers on many machines) or PGlite (one process).
import { randomUUID } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { TapedeckError } from '../recording/errors.js';
import type { Warehouse } from './warehouse.js';

export const QUEUE_SCHEMA = 'tapedeck_queue';
/** The job kinds and their pg-boss queues. */
export const JOB_KINDS = ['replay', 'ingest'] as const;
export type JobKind = (typeof JOB_KINDS)[number];
const DEAD_LETTER = 'tapedeck-dead-letter';
const queueName = (kind: string): string => `tapedeck-${kind}`;

export type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
export const JOB_STATES: readonly JobState[] = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'];

export interface Job {
  id: string;
  kind: JobKind;
  payload: Record<string, unknown>;
  /** How many times it was retried before (0 on the first attempt). */
  retryCount: number;
  singletonKey: string | null;
}

export interface JobInfo extends Job {
  state: JobState;
  output: unknown;
}

export interface EnqueueOptions {
  /** At most one job with this key waits and one runs; another is refused (enqueue returns null). */
  singletonKey?: string;
  /** Retries after the first attempt (default 2). */
  retryLimit?: number;
  /** Seconds before the first retry, doubled at each next one (default 5). */
  retryDelaySeconds?: number;
  /**
   * A job running longer than this is taken to have lost its worker: it is failed and retried
   * (default 900). Set it above the longest job, or a slow job runs twice.
   */
  expireInSeconds?: number;
}

export interface Queue {
  /** The job's id, or null when a job with the same singleton key is already waiting. */
  enqueue(kind: JobKind, payload: Record<string, unknown>, options?: EnqueueOptions): Promise<string | null>;
  /** The next job of one of these kinds, now active for this worker; null when none is ready. */
  fetch(kinds?: readonly JobKind[]): Promise<Job | null>;
  complete(job: Job, output?: unknown): Promise<void>;
  /** Retried with backoff while retries remain, else failed (and copied to the dead-letter queue). */
  fail(job: Job, error: string): Promise<void>;
  get(kind: JobKind, id: string): Promise<JobInfo | null>;
  /** Jobs by state (all kinds, or these). */
  counts(kinds?: readonly JobKind[]): Promise<Record<JobState, number>>;
  /** Stops pg-boss's maintenance (the warehouse connection stays open: close the warehouse). */
  close(): Promise<void>;
}

export interface QueueOptions {
  /** How often this process checks for expired jobs and retries them (default 10 s; min 1). */
  maintenanceSeconds?: number;
}

/** pg-boss's database interface over the warehouse connection: statements with parameters go one at a time, the rest as a script. */
function bossDb(warehouse: Warehouse): PgBoss.Db {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const r = values && values.length > 0 ? await warehouse.query(text, values) : await warehouse.exec(text);
      return { rows: r.rows };
    },
  };
}

/**
 * Opens the queue on a warehouse (creating pg-boss's schema on first use).
 * @example const q = await openQueue(wh); await q.enqueue('replay', { recording: 'pg://db/evals/run-1' });
 */
export async function openQueue(warehouse: Warehouse, options: QueueOptions = {}): Promise<Queue> {
  const { default: Boss } = await import('pg-boss');
  const boss = new Boss({
    db: bossDb(warehouse),
    schema: QUEUE_SCHEMA,
    schedule: false,
    supervise: true,
    maintenanceIntervalSeconds: Math.max(1, options.maintenanceSeconds ?? 10),
  });
  const errors: Error[] = [];
  boss.on('error', (error) => errors.push(error));
  try {
    await boss.start();
    for (const name of [DEAD_LETTER, ...JOB_KINDS.map(queueName)]) {
      // 'stately': per singleton key, at most one job waiting (created or retry) and one running.
      await boss.createQueue(name, {
        name,
        policy: 'stately',
        ...(name === DEAD_LETTER ? {} : { deadLetter: DEAD_LETTER }),
      });
    }
  } catch (error) {
    await boss.stop({ graceful: false, wait: false, close: false }).catch(() => undefined);
    throw new TapedeckError(
      'QUEUE_UNAVAILABLE',
      `cannot open the job queue in ${warehouse.location}: ${(error as Error).message}`,
    );
  }

  const toJob = (kind: JobKind, row: PgBoss.JobWithMetadata<Record<string, unknown>>): Job => ({
    id: row.id,
    kind,
    payload: row.data ?? {},
    retryCount: row.retryCount ?? 0,
    singletonKey: row.singletonKey && !row.singletonKey.startsWith('job:') ? row.singletonKey : null,
  });

  return {
    async enqueue(kind, payload, options = {}) {
      const retryDelay = options.retryDelaySeconds ?? 5;
      return boss.send(queueName(kind), payload, {
        retryLimit: options.retryLimit ?? 2,
        retryDelay,
        retryBackoff: retryDelay > 0,
        expireInSeconds: options.expireInSeconds ?? 900,
        // 'stately' groups jobs without a key under one empty key (one waiting at a time): give each its own.
        singletonKey: options.singletonKey ?? `job:${randomUUID()}`,
      });
    },
    async fetch(kinds = JOB_KINDS) {
      const next = async (): Promise<Job | null> => {
        for (const kind of kinds) {
          const rows = await boss.fetch<Record<string, unknown>>(queueName(kind), {
            batchSize: 1,
            includeMetadata: true,
          });
          const row = rows?.[0];
          if (row) return toJob(kind, row);
        }
        return null;
      };
      const job = await next();
      if (job || warehouse.kind !== 'pglite') return job;
      // pg-boss hands out a job whose start is before now(), and PGlite's clock moves in whole
      // milliseconds: a job sent (or failed with no retry delay) in this same millisecond is ready
      // but not yet before now(). Look once more after the clock has moved on.
      await new Promise((r) => setTimeout(r, 2));
      return next();
    },
    async complete(job, output) {
      await boss.complete(queueName(job.kind), job.id, output === undefined ? undefined : (output as object));
    },
    async fail(job, error) {
      await boss.fail(queueName(job.kind), job.id, { message: error });
    },
    async get(kind, id) {
      const row = await boss.getJobById<Record<string, unknown>>(queueName(kind), id);
      if (!row) return null;
      return { ...toJob(kind, row), state: row.state, output: row.output ?? null };
    },
    async counts(kinds = JOB_KINDS) {
      const out = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
      const r = await warehouse.query(
        `SELECT state, count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE name = ANY($1::text[]) GROUP BY state`,
        [kinds.map(queueName)],
      );
      for (const row of r.rows) out[row.state as JobState] = Number(row.n);
      return out;
    },
    async close() {
      await boss.stop({ graceful: false, wait: true, close: false });
    },
  };
}

export interface WorkerOptions {
  /** A name for this worker, in each job's output (default host:pid). */
  name?: string;
  kinds?: readonly JobKind[];
  /** Stop when no job is ready instead of waiting for more. */
  once?: boolean;
  /** Wait between polls of an empty queue (default 1000 ms). */
  pollMs?: number;
  signal?: AbortSignal;
  onStart?: (job: Job) => void;
  onJob?: (event: { job: Job; outcome: 'done' | 'failed'; error?: string; ms: number }) => void;
}

export type JobHandler = (job: Job) => Promise<unknown>;

/**
 * Runs jobs one at a time until stopped (or, with `once`, until none is ready); returns how many ran.
 * A job that throws is failed (pg-boss retries it while retries remain).
 */
export async function runWorker(
  queue: Queue,
  handlers: Partial<Record<JobKind, JobHandler>>,
  options: WorkerOptions = {},
): Promise<number> {
  const name = options.name ?? `${process.env.HOSTNAME ?? 'worker'}:${process.pid}`;
  const kinds = options.kinds ?? (Object.keys(handlers) as JobKind[]);
  let ran = 0;
  while (!options.signal?.aborted) {
    const job = await queue.fetch(kinds);
    if (!job) {
      if (options.once) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs ?? 1000);
        options.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      continue;
    }
    const t0 = performance.now();
    options.onStart?.(job);
    try {
      const handler = handlers[job.kind];
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      const result = await handler(job);
      await queue.complete(job, { worker: name, result: result ?? null });
      options.onJob?.({ job, outcome: 'done', ms: performance.now() - t0 });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await queue.fail(job, message);
      options.onJob?.({ job, outcome: 'failed', error: message, ms: performance.now() - t0 });
    }
    ran++;
  }
  return ran;
}
