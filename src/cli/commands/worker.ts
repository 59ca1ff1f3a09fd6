// `tapedeck worker`: runs queued jobs (replays, ingests) from the warehouse's job queue, so many
// replays — golden set × k samples × prompt variants — spread over machines sharing one Postgres.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { TapedeckConfig } from '../../config/index.js';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { readManifest, readRecording } from '../../recording/index.js';
import {
  type Job,
  type JobHandler,
  loadScores,
  normalizeScores,
  openQueue,
  openWarehouse,
  runWorker,
  type Warehouse,
  warehouseOptionsFrom,
} from '../../store/index.js';
import { addConfigOptions, type ConfigCliOptions, configFromOptions } from '../config-options.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * Handlers of the job kinds: `ingest` {recording, scores?} and `replay` {recording, mode,
 * systemPromptFile?, promptPatchFile?, modelEndpoint?, out?, contract?, config?}. A replay's answer
 * chain (sandbox services, mocks, simulator) is the job's `config` file when it names one, else the
 * worker's project file (`config`).
 */
export function jobHandlers(warehouse: Warehouse, config?: TapedeckConfig): Record<string, JobHandler> {
  return {
    async ingest(job: Job) {
      const dir = str(job.payload.recording);
      if (!dir) throw new Error('ingest job without a recording');
      const scoresFile = str(job.payload.scores);
      const result = await warehouse.ingest(await readRecording(dir), scoresFile ? loadScores(scoresFile) : []);
      return { traceId: result.traceId, rows: result.rows };
    },
    async replay(job: Job) {
      const recording = str(job.payload.recording);
      if (!recording) throw new Error('replay job without a recording');
      const mode = job.payload.mode === 'counterfactual' ? 'counterfactual' : 'exact';
      const systemPromptFile = str(job.payload.systemPromptFile);
      const promptPatchFile = str(job.payload.promptPatchFile);
      const modelEndpoint = str(job.payload.modelEndpoint);
      const out = str(job.payload.out);
      const configFile = str(job.payload.config);
      const chain = configFile ? (await configFromOptions({ config: configFile })).config : config;
      const { replay } = await import('../../replay/index.js');
      const result = await replay({
        recording,
        mode,
        ...(systemPromptFile ? { systemPrompt: readFileSync(systemPromptFile, 'utf8') } : {}),
        ...(promptPatchFile ? { promptPatch: readFileSync(promptPatchFile, 'utf8') } : {}),
        ...(modelEndpoint ? { modelEndpoint } : {}),
        ...(out ? { out } : {}),
        ...(chain ? { config: chain } : {}),
      });
      const replayed = await readRecording(result.dir);
      const contractFile = str(job.payload.contract);
      let scores: ReturnType<typeof normalizeScores> | undefined;
      if (contractFile) {
        const { evaluateRecording, loadContract } = await import('../../evaluate/index.js');
        scores = normalizeScores(evaluateRecording(replayed, loadContract(contractFile)));
      }
      const ingested = await warehouse.ingest(replayed, scores);
      return { dir: result.dir, traceId: ingested.traceId, divergences: result.divergences.length };
    },
  };
}

interface RunOptions extends ConfigCliOptions {
  db?: string;
  once?: boolean;
  kinds?: string[];
  pollMs?: string;
  name?: string;
}

interface EnqueueOptions {
  db?: string;
  replay?: string;
  samples?: string;
  systemPrompt?: string;
  promptPatch?: string;
  modelEndpoint?: string;
  contract?: string;
  outDir?: string;
  scores?: string;
  json?: boolean;
}

export function register(program: Command): void {
  const worker = program
    .command('worker')
    .exitOverride(exitOnUsageError)
    .description(
      "Takes jobs from the warehouse's job queue (table tapedeck_job) one at a time and runs them: `replay` jobs replay a recording (exact or counterfactual, optionally with a changed system prompt), evaluate it against a contract when one is given, and ingest the replay's ledger and scores; `ingest` jobs ingest a recording. Workers on many machines can share one Postgres server (--db or TAPEDECK_DATABASE_URL): a job is claimed with FOR UPDATE SKIP LOCKED, so it runs once; a failed job is retried with backoff up to 3 attempts; a job whose worker died is put back after 15 minutes. Recording paths must be readable by every worker.",
    )
    .option(
      '--db <url|dir>',
      'postgres:// URL of the shared server, or a PGlite folder (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option('--once', 'stop when no job is ready instead of waiting for more')
    .option('--kinds <kind...>', 'only these job kinds (replay, ingest)')
    .option('--poll-ms <ms>', 'wait between polls of an empty queue', '1000')
    .option('--name <name>', "this worker's name in tapedeck_job.locked_by (default host:pid)");
  addConfigOptions(worker)
    .addHelpText(
      'after',
      `
Examples:
  tapedeck worker enqueue recordings/examples/openai-baseline --replay counterfactual --samples 5 \\
      --system-prompt examples/prompts/fixed.txt --contract examples/contracts/book-flight.yaml \\
      --db postgres://db/evals
  tapedeck worker --db postgres://db/evals                  on each machine
  tapedeck query "SELECT state, count(*) FROM tapedeck_job GROUP BY 1" --db postgres://db/evals`,
    )
    .action(async (opts: RunOptions) => {
      const pollMs = Number(opts.pollMs ?? 1000);
      if (!Number.isFinite(pollMs) || pollMs < 0)
        throw new TapedeckError('BAD_OPTION', `--poll-ms ${opts.pollMs} is not a number of milliseconds`);
      const warehouse = await openWarehouse(warehouseOptionsFrom(opts.db));
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const ran = await runWorker(
          openQueue(warehouse),
          jobHandlers(warehouse, (await configFromOptions(opts)).config),
          {
            name: opts.name ?? `${hostname()}:${process.pid}`,
            ...(opts.kinds ? { kinds: opts.kinds } : {}),
            ...(opts.once ? { once: true } : {}),
            pollMs,
            signal: stop.signal,
            onJob: ({ job, outcome, error, ms }) => {
              const tail = error ? `: ${error}` : '';
              process.stderr.write(
                `tapedeck worker: job ${job.id} ${job.kind} ${outcome} in ${Math.round(ms)} ms${tail}\n`,
              );
            },
          },
        );
        process.stderr.write(`tapedeck worker: ran ${ran} job${ran === 1 ? '' : 's'}\n`);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await warehouse.close();
      }
    });

  worker
    .command('enqueue')
    .description('queue replay jobs (with --replay) or ingest jobs for the given recordings')
    .argument('<recordings...>', 'recording folders (paths every worker can read)')
    .option(
      '--db <url|dir>',
      'the warehouse holding the queue (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option('--replay <mode>', 'queue replays in this mode: exact | counterfactual')
    .option('--samples <k>', 'replays per recording (k samples for pass@k)', '1')
    .option('--system-prompt <file>', 'replay with this system prompt')
    .option('--prompt-patch <file>', 'replay with this unified diff applied to the system prompt')
    .option('--model-endpoint <url>', 'where live model calls of counterfactual replays go')
    .option('--contract <file>', 'evaluate each replay against this eval contract before ingesting')
    .option('--out-dir <dir>', 'folder for the replay recordings (default: recordings/)')
    .option('--scores <file>', 'for ingest jobs: a scores file')
    .option('--json', 'print the job ids as JSON')
    .action(async (recordings: string[], opts: EnqueueOptions) => {
      const samples = Number(opts.samples ?? 1);
      if (!Number.isInteger(samples) || samples < 1)
        throw new TapedeckError('BAD_OPTION', `--samples ${opts.samples} is not a positive integer`);
      if (opts.replay !== undefined && opts.replay !== 'exact' && opts.replay !== 'counterfactual') {
        throw new TapedeckError('BAD_OPTION', `--replay ${opts.replay}: expected exact or counterfactual`);
      }
      // `worker enqueue … --db X`: commander hands --db to the parent `worker` command when both
      // define it, so read it from there too (else the jobs would go to the default warehouse).
      const db = opts.db ?? worker.opts<RunOptions>().db;
      // A path that is not a recording would only fail later, on a worker: refuse it now.
      for (const rec of recordings) await readManifest(rec);
      const warehouse = await openWarehouse(warehouseOptionsFrom(db));
      const ids: number[] = [];
      try {
        const queue = openQueue(warehouse);
        for (const rec of recordings) {
          const recording = resolve(rec);
          if (!opts.replay) {
            ids.push(
              await queue.enqueue('ingest', { recording, ...(opts.scores ? { scores: resolve(opts.scores) } : {}) }),
            );
            continue;
          }
          for (let k = 0; k < samples; k++) {
            const payload: Record<string, unknown> = { recording, mode: opts.replay, sample: k };
            if (opts.systemPrompt) payload.systemPromptFile = resolve(opts.systemPrompt);
            if (opts.promptPatch) payload.promptPatchFile = resolve(opts.promptPatch);
            if (opts.modelEndpoint) payload.modelEndpoint = opts.modelEndpoint;
            if (opts.contract) payload.contract = resolve(opts.contract);
            if (opts.outDir)
              payload.out = join(
                resolve(opts.outDir),
                `${rec.split('/').filter(Boolean).at(-1)}-replay-${Date.now().toString(36)}-${k}`,
              );
            ids.push(await queue.enqueue('replay', payload));
          }
        }
      } finally {
        await warehouse.close();
      }
      if (opts.json) process.stdout.write(`${JSON.stringify({ jobs: ids })}\n`);
      else
        process.stdout.write(
          `queued ${ids.length} job${ids.length === 1 ? '' : 's'} (${ids.join(', ')}) in ${warehouse.location}\n`,
        );
    });
}
