// `tapedeck worker`: runs queued jobs (replays, ingests) from the job queue (pg-boss on the
// warehouse database), so many replays — golden set × k samples × prompt variants — spread over
// machines sharing one Postgres; `tapedeck worker enqueue` queues them.

import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseDuration } from '../../config/duration.js';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { readManifest } from '../../recording/index.js';
import {
  type JobKind,
  openQueue,
  openWarehouse,
  type Queue,
  runWorker,
  type Warehouse,
  warehouseOptionsFrom,
} from '../../store/index.js';
import { jobHandlers, type ReplayJob } from '../../store/jobs.js';
import { isStoreUrl, localRecording } from '../../store/recordings/index.js';
import { addConfigOptions, type ConfigCliOptions, configFromOptions } from '../config-options.js';
import { writeErr, writeOut } from '../output.js';

interface RunOptions extends ConfigCliOptions {
  db?: string;
  once?: boolean;
  kinds?: string[];
  pollMs?: string;
  name?: string;
  workDir?: string;
  maintenanceSeconds?: string;
}

interface EnqueueOptions {
  db?: string;
  replay?: string;
  samples?: string;
  systemPrompt?: string;
  promptPatch?: string;
  promptFor?: string;
  modelEndpoint?: string;
  contract?: string;
  out?: string;
  expireSeconds?: string;
  retries?: string;
  trustRecording?: boolean;
  timeout?: string;
  wallTimeout?: string;
  json?: boolean;
}

function positive(option: string, value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw new TapedeckError('BAD_OPTION', `${option} ${value} is not a number ≥ ${min}`);
  return n;
}

/** Opens the warehouse and its queue; `fn` runs with both, and both are closed after. */
export async function withQueue<T>(
  db: string | undefined,
  fn: (warehouse: Warehouse, queue: Queue) => Promise<T>,
  maintenanceSeconds?: number,
): Promise<T> {
  const warehouse = await openWarehouse(warehouseOptionsFrom(db));
  try {
    const queue = await openQueue(warehouse, maintenanceSeconds === undefined ? {} : { maintenanceSeconds });
    try {
      return await fn(warehouse, queue);
    } finally {
      await queue.close();
    }
  } finally {
    await warehouse.close();
  }
}

const STORE_NOTE = `Workers read recordings by store URL (pg://…/<id>, file://…/<id>, s3://…/<id>; see tapedeck push), so they need
no shared disk; a plain path works for workers on the machine that has it. Prompts and contracts
travel inside the job as text.`;

export function register(program: Command): void {
  const worker = program
    .command('worker')
    .exitOverride(exitOnUsageError)
    .description(
      "Takes jobs from the job queue (pg-boss, in the warehouse database: schema tapedeck_queue) one at a time and runs them: `replay` jobs replay a recording (exact or counterfactual, optionally with a changed system prompt), score it against the contract they carry, ingest the replay's ledger and scores, and push the replay to a store when asked; `ingest` jobs ingest a recording. Workers on many machines share one Postgres server (--db or TAPEDECK_DATABASE_URL): each job goes to one worker; a failed job is retried with backoff (2 retries), then moved to the dead-letter queue; a job whose worker died is retried once it has been active longer than its expiry (tapedeck worker enqueue --expire-seconds, default 900). With a PGlite folder as --db, the queue serves this one process.",
    )
    .option(
      '--db <url|dir>',
      'postgres:// URL of the shared server, or a PGlite folder (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option('--once', 'stop when no job is ready instead of waiting for more')
    .option('--kinds <kind...>', 'only these job kinds (replay, ingest)')
    .option('--poll-ms <ms>', 'wait between polls of an empty queue', '1000')
    .option('--name <name>', "this worker's name, written in each job's output (default host:pid)")
    .option('--work-dir <dir>', 'where this worker keeps pulled recordings and its replays', '.tapedeck/worker')
    .option('--maintenance-seconds <s>', 'how often to look for jobs of dead workers to retry', '10');
  addConfigOptions(worker)
    .addHelpText(
      'after',
      `
Examples:
  tapedeck push recordings/examples/openai-baseline pg://postgres@db:5432/evals
  tapedeck worker enqueue pg://postgres@db:5432/evals/openai-baseline --replay counterfactual --samples 5 \\
      --system-prompt examples/prompts/fixed.txt --contract examples/contracts/book-flight.yaml \\
      --db postgres://postgres@db:5432/evals --trust-recording
  tapedeck worker --db postgres://postgres@db:5432/evals          on each machine
  tapedeck sweep …                                                 a whole grid, with pass@k per prompt version

${STORE_NOTE}`,
    )
    .action(async (opts: RunOptions) => {
      const pollMs = positive('--poll-ms', opts.pollMs, 1000);
      const maintenanceSeconds = positive('--maintenance-seconds', opts.maintenanceSeconds, 10, 1);
      const kinds = opts.kinds?.map((k) => {
        if (k !== 'replay' && k !== 'ingest')
          throw new TapedeckError('BAD_OPTION', `--kinds ${k}: expected replay or ingest`);
        return k as JobKind;
      });
      const name = opts.name ?? `${hostname()}:${process.pid}`;
      const { config } = await configFromOptions(opts);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const ran = await withQueue(
          opts.db,
          (warehouse, queue) =>
            runWorker(queue, jobHandlers({ warehouse, workDir: resolve(opts.workDir ?? '.tapedeck/worker'), config }), {
              name,
              ...(kinds ? { kinds } : {}),
              ...(opts.once ? { once: true } : {}),
              pollMs,
              signal: stop.signal,
              onStart: (job) => writeErr(`tapedeck worker ${name}: job ${job.id} ${job.kind} started\n`),
              onJob: ({ job, outcome, error, ms }) => {
                const tail = error ? `: ${error}` : '';
                writeErr(
                  `tapedeck worker ${name}: job ${job.id} ${job.kind} ${outcome} in ${Math.round(ms)} ms${tail}\n`,
                );
              },
            }),
          maintenanceSeconds,
        );
        writeErr(`tapedeck worker ${name}: ran ${ran} job${ran === 1 ? '' : 's'}\n`);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });

  worker
    .command('enqueue')
    .description('queue replay jobs (with --replay) or ingest jobs for the given recordings')
    .argument('<recordings...>', 'recording folders or store URLs (pg://…/<id>, file://…/<id>)')
    .option(
      '--db <url|dir>',
      'the warehouse holding the queue (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option('--replay <mode>', 'queue replays in this mode: exact | counterfactual')
    .option('--samples <k>', 'replays per recording (k samples for pass@k)', '1')
    .option('--system-prompt <file>', 'replay with this system prompt (sent as text)')
    .option('--prompt-patch <file>', 'replay with this unified diff applied to the system prompt (sent as text)')
    .option(
      '--prompt-for <text>',
      'in runs of several agents: whose prompt changes (its recorded prompt contains this text)',
    )
    .option('--model-endpoint <url>', 'where live model calls of counterfactual replays go')
    .option('--contract <file>', 'score each replay (or ingested recording) against this eval contract (sent as text)')
    .option('--out <store-url|dir>', 'push each replay to this store (or write it under this folder on the worker)')
    .option('--expire-seconds <s>', 'a job active longer than this lost its worker and is retried', '900')
    .option('--retries <n>', 'retries of a failed job before it goes to the dead-letter queue', '2')
    .option(
      '--trust-recording',
      'replay jobs run the recorded command and apply the recorded env though the worker did not make the recording (read it first: a recording is data from whoever made it)',
    )
    .option(
      '--timeout <duration>',
      'stop each replay after this long without progress (a live model answering is not counted): 90s, 5m, 0 or none (default: the worker’s config file’s timeout, else 5m); a job stopped so is done, its replay marked timed-out',
    )
    .option('--wall-timeout <duration>', 'stop each replay after this long in all (default: none)')
    .option('--json', 'print the job ids as JSON')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck worker enqueue recordings/examples/openai-baseline --replay exact --samples 2 --db /tmp/wh \\
      --trust-recording                                       a committed example: made elsewhere
  tapedeck worker --once --db /tmp/wh                         this machine runs them (a PGlite folder)
  tapedeck worker enqueue recordings/examples/openai-baseline --db /tmp/wh --contract examples/contracts/book-flight.yaml
                                                              an ingest job: ledger and scores, no replay
  tapedeck worker enqueue pg://postgres@db:5432/evals/openai-baseline --replay counterfactual --samples 5 \\
      --system-prompt examples/prompts/fixed.txt --contract examples/contracts/book-flight.yaml \\
      --db postgres://postgres@db:5432/evals --trust-recording   for workers on any machine (none made it)

A worker runs a recording's own command (and applies its env) only when its own key sealed the
recording (recorded on that machine) or the job was queued with --trust-recording.

${STORE_NOTE}`,
    )
    .action(async (recordings: string[], opts: EnqueueOptions) => {
      const samples = positive('--samples', opts.samples, 1, 1);
      if (!Number.isInteger(samples))
        throw new TapedeckError('BAD_OPTION', `--samples ${opts.samples} is not a positive integer`);
      if (opts.replay !== undefined && opts.replay !== 'exact' && opts.replay !== 'counterfactual') {
        throw new TapedeckError('BAD_OPTION', `--replay ${opts.replay}: expected exact or counterfactual`);
      }
      const expireInSeconds = positive('--expire-seconds', opts.expireSeconds, 900, 1);
      // Checked here, where a mistake is one line; the job carries the text as given.
      if (opts.timeout !== undefined) parseDuration('--timeout', opts.timeout);
      if (opts.wallTimeout !== undefined) parseDuration('--wall-timeout', opts.wallTimeout);
      const retryLimit = positive('--retries', opts.retries, 2);
      const text = (file: string | undefined, option: string): string | undefined => {
        if (file === undefined) return undefined;
        try {
          return readFileSync(file, 'utf8');
        } catch {
          throw new TapedeckError('BAD_OPTION', `${option} ${file}: cannot read the file`);
        }
      };
      const systemPrompt = text(opts.systemPrompt, '--system-prompt');
      const promptPatch = text(opts.promptPatch, '--prompt-patch');
      const contract = text(opts.contract, '--contract');
      // `worker enqueue … --db X`: commander hands --db to the parent `worker` command when both
      // define it, so read it from there too (else the jobs would go to the default warehouse).
      const db = opts.db ?? worker.opts<RunOptions>().db;
      // A path that is not a recording would only fail later, on a worker: refuse it now.
      for (const rec of recordings) await readManifest(await localRecording(rec));
      const refs = recordings.map((rec) => (isStoreUrl(rec) ? rec : resolve(rec)));
      const out = opts.out === undefined || isStoreUrl(opts.out) ? opts.out : resolve(opts.out);
      const ids: string[] = [];
      const location = await withQueue(db, async (warehouse, queue) => {
        for (const recording of refs) {
          if (!opts.replay) {
            const id = await queue.enqueue(
              'ingest',
              { recording, ...(contract !== undefined ? { contract } : {}) },
              { expireInSeconds, retryLimit },
            );
            if (id) ids.push(id);
            continue;
          }
          for (let k = 0; k < samples; k++) {
            const payload: ReplayJob = {
              recording,
              mode: opts.replay as ReplayJob['mode'],
              ...(systemPrompt !== undefined ? { systemPrompt } : {}),
              ...(promptPatch !== undefined ? { promptPatch } : {}),
              ...(opts.promptFor !== undefined ? { promptFor: opts.promptFor } : {}),
              ...(opts.modelEndpoint !== undefined ? { modelEndpoint: opts.modelEndpoint } : {}),
              ...(contract !== undefined ? { contract } : {}),
              ...(out !== undefined ? { out } : {}),
              ...(opts.trustRecording ? { trustRecording: true } : {}),
              ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
              ...(opts.wallTimeout !== undefined ? { wallTimeout: opts.wallTimeout } : {}),
            };
            const id = await queue.enqueue('replay', payload, { expireInSeconds, retryLimit });
            if (id) ids.push(id);
          }
        }
        return warehouse.location;
      });
      if (opts.json) writeOut(`${JSON.stringify({ jobs: ids })}\n`);
      else writeOut(`queued ${ids.length} job${ids.length === 1 ? '' : 's'} in ${location}\n`);
    });
}
