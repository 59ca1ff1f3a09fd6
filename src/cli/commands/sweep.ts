// `tapedeck sweep <recordings…> --prompts v1.txt v2.txt … --samples k --contract c.yaml`: replays
// every recording with every prompt version k times through the job queue, then prints pass@k,
// pass^k and cost per resolved task per prompt version, computed from the warehouse.
import { readFileSync } from 'node:fs';
import { basename, extname, resolve } from 'node:path';
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { terminalSafe } from '../../recording/terminal-safe.js';
import { runWorker, warehouseOptionsFrom } from '../../store/index.js';
import { jobHandlers } from '../../store/jobs.js';
import { isStoreUrl, pushRecording } from '../../store/recordings/index.js';
import {
  enqueueSweep,
  type PromptVersion,
  planSweep,
  type SweepSummary,
  sweepProgress,
  sweepSummary,
} from '../../store/sweep.js';
import { addConfigOptions, type ConfigCliOptions, configFromOptions } from '../config-options.js';
import { writeErr, writeOut } from '../output.js';
import { withQueue } from './worker.js';

interface SweepOptions extends ConfigCliOptions {
  prompts?: string[];
  samples: string;
  contract: string;
  db?: string;
  modelEndpoint?: string;
  mode: string;
  store?: string;
  workers: string;
  wait: boolean;
  expireSeconds: string;
  trustRecording?: boolean;
  json?: boolean;
}

function readText(file: string, option: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new TapedeckError('BAD_OPTION', `${option} ${file}: cannot read the file`);
  }
}

/** Prompt versions are named by their file names (without extension), or by their paths when those clash. */
function promptVersions(files: readonly string[]): PromptVersion[] {
  const names = files.map((f) => basename(f, extname(f)));
  const clash = new Set(names).size !== names.length;
  return files.map((f, i) => ({ version: clash ? f : (names[i] as string), text: readText(f, '--prompts') }));
}

const num = (n: number | null, digits = 3): string => (n === null ? '-' : n.toFixed(digits));
const money = (n: number | null): string =>
  n === null ? '-' : n >= 1 ? n.toFixed(2) : Number(n.toPrecision(4)).toString();

export function formatSweep(summary: SweepSummary): string {
  const k = summary.k;
  const head = [
    'prompt version',
    'tasks',
    'runs',
    'resolved',
    'pass@1',
    `pass@${k}`,
    `pass^${k}`,
    'cost/run',
    'cost/resolved',
  ];
  const rows = summary.versions.map((v) => [
    v.promptVersion,
    String(v.tasks),
    String(v.runs),
    String(v.resolved),
    num(v.passAt1),
    num(v.passAtK),
    num(v.passHatK),
    money(v.costPerRun),
    money(v.costPerResolvedTask),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  const currency = summary.versions.find((v) => v.currency)?.currency ?? 'USD';
  const notes = summary.versions
    .filter((v) => v.incompleteTasks.length > 0)
    .map(
      (v) => `${v.promptVersion}: ${v.incompleteTasks.length} task(s) with fewer than ${k} runs left out of pass@${k}`,
    );
  return [
    `sweep ${summary.sweepId}: pass@k unbiased (seed 001 EQ A6.1), cost per resolved task = cost per run / resolution rate (EQ A6.2), ${currency}`,
    line(head),
    ...rows.map(line),
    ...notes,
  ].join('\n');
}

export function register(program: Command): void {
  const sweep = program
    .command('sweep')
    .exitOverride(exitOnUsageError)
    .description(
      "Replays every recording with every prompt version k times (counterfactual: the system prompt replaced, the model called live at --model-endpoint), each replay a job in the queue run by workers — this process's own (--workers) and any `tapedeck worker` sharing the database — scored against the contract and ingested. Then prints, per prompt version, pass@1, pass@k and pass^k (unbiased, over the recordings as tasks) and cost per resolved task, computed from the warehouse rows of the replays. A probe (recording × prompt × sample) is keyed by what it replays: running the same sweep again reuses what was answered, and a probe queued or running is never queued twice. With a Postgres server as --db, local recordings are pushed to the same database (--store) so workers on other machines can replay them.",
    )
    .argument('<recordings...>', 'recording folders or store URLs (the tasks)')
    .requiredOption('--prompts <files...>', 'system prompt versions, one file each')
    .option('--samples <k>', 'replays per recording and prompt version (k)', '5')
    .requiredOption(
      '--contract <file>',
      'eval contract (YAML): its hard gate decides whether a replay resolved the task',
    )
    .option('--model-endpoint <url>', 'where the replays’ live model calls go')
    .option('--mode <mode>', 'counterfactual (default) or exact', 'counterfactual')
    .option(
      '--db <url|dir>',
      'the warehouse and queue: postgres:// URL (workers anywhere) or a PGlite folder (this process only) (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option(
      '--store <url>',
      'push local recordings and the replays here (default with a postgres:// --db: that database)',
    )
    .option('--workers <n>', 'replays this process runs at once (0: leave them to `tapedeck worker`s)', '1')
    .option('--no-wait', 'queue the sweep and exit (run the same command again later to see the figures)')
    .option('--expire-seconds <s>', 'a replay running longer than this lost its worker and is retried', '900')
    .option(
      '--trust-recording',
      'run the recorded command and apply the recorded env of recordings made elsewhere (read them first: a recording is data from whoever made it)',
    )
    .option('--json', 'print the figures as JSON');
  // The answer chain of this process's own workers (sandbox services, mocks, simulator), as `tapedeck worker` takes it.
  addConfigOptions(sweep)
    .addHelpText(
      'after',
      `
Examples:
  tapedeck sweep recordings/examples/* --trust-recording --prompts examples/prompts/baseline.txt examples/prompts/fixed.txt \\
      --samples 5 --contract examples/contracts/book-flight.yaml --model-endpoint http://127.0.0.1:8787 \\
      --config examples/tapedeck.config.ts      calls the recordings do not hold: the travel API in the sandbox
  tapedeck sweep recordings/examples/* --prompts v1.txt v2.txt v3.txt --contract task.yaml \\
      --db postgres://postgres@db:5432/evals --workers 0        workers elsewhere: tapedeck worker --db …

Figures are per prompt version: pass@k is the chance that at least one of k attempts resolves a task,
pass^k that all k do; cost per resolved task is what a resolved task costs including the runs that
failed. A replay runs a recording's own command only when a worker's key sealed it (recorded on that
machine) or with --trust-recording; recordings made elsewhere (committed examples too) need the flag.
The same figures come from SQL on the warehouse (tables sweep, sweep_member, sweep_probe,
eval_task_result, trace_run); see docs/scale.md.`,
    )
    .action(async (recordings: string[], opts: SweepOptions) => {
      if (opts.mode !== 'counterfactual' && opts.mode !== 'exact')
        throw new TapedeckError('BAD_OPTION', `--mode ${opts.mode}: expected counterfactual or exact`);
      const samples = Number(opts.samples);
      const workers = Number(opts.workers);
      if (!Number.isInteger(workers) || workers < 0)
        throw new TapedeckError('BAD_OPTION', `--workers ${opts.workers} is not a whole number ≥ 0`);
      const expireInSeconds = Number(opts.expireSeconds);
      if (!Number.isFinite(expireInSeconds) || expireInSeconds < 1)
        throw new TapedeckError('BAD_OPTION', `--expire-seconds ${opts.expireSeconds} is not a number of seconds`);
      const prompts = promptVersions(opts.prompts ?? []);
      const contract = readText(opts.contract, '--contract');
      const { config } = await configFromOptions(opts);
      const db = warehouseOptionsFrom(opts.db);
      const store = opts.store ?? (db.url ? db.url.replace(/^postgres(ql)?:/, 'pg:') : undefined);
      if (store !== undefined && !isStoreUrl(store))
        throw new TapedeckError('BAD_OPTION', `--store ${store} is not a store URL`);
      // Workers elsewhere cannot read this disk: local recordings go to the store first.
      const refs: string[] = [];
      for (const rec of recordings) {
        if (isStoreUrl(rec) || store === undefined) refs.push(isStoreUrl(rec) ? rec : resolve(rec));
        else refs.push((await pushRecording(rec, store)).url);
      }
      const plan = await planSweep({
        recordings: refs,
        prompts,
        samples,
        contract,
        mode: opts.mode,
        ...(opts.modelEndpoint !== undefined ? { modelEndpoint: opts.modelEndpoint } : {}),
        ...(store !== undefined ? { out: store } : {}),
        ...(opts.trustRecording ? { trustRecording: true } : {}),
      });
      const summary = await withQueue(opts.db, async (warehouse, queue) => {
        const queued = await enqueueSweep(warehouse, queue, plan, { expireInSeconds });
        writeErr(
          `tapedeck sweep ${plan.sweepId}: ${plan.probes.length} replays (${recordings.length} recordings × ${prompts.length} prompt versions × k = ${plan.k}); ${queued.answered} answered before, ${queued.queued} queued${queued.alreadyQueued ? `, ${queued.alreadyQueued} already in the queue` : ''}\n`,
        );
        if (!opts.wait) return undefined;
        const stop = new AbortController();
        const handlers = jobHandlers({
          warehouse,
          workDir: resolve('.tapedeck/worker'),
          ...(config ? { config } : {}),
        });
        const loops = Array.from({ length: workers }, (_, i) =>
          runWorker(queue, handlers, {
            name: `sweep:${process.pid}:${i}`,
            kinds: ['replay'],
            pollMs: 500,
            signal: stop.signal,
          }),
        );
        let last = '';
        try {
          for (;;) {
            const p = await sweepProgress(warehouse, plan.sweepId);
            const line = `tapedeck sweep: ${p.answered}/${p.total} replays answered${p.failed ? `, ${p.failed} failed` : ''}`;
            if (line !== last) {
              process.stderr.write(process.stderr.isTTY ? `\r${terminalSafe(line)}` : `${terminalSafe(line)}\n`);
              last = line;
            }
            if (p.answered + p.failed >= p.total) break;
            await new Promise((r) => setTimeout(r, 1000));
          }
        } finally {
          stop.abort();
          await Promise.all(loops);
          if (process.stderr.isTTY) process.stderr.write('\n');
        }
        return sweepSummary(
          warehouse,
          plan.sweepId,
          prompts.map((p) => p.version),
        );
      });
      if (!summary) {
        writeOut(`queued sweep ${plan.sweepId}\n`);
        return;
      }
      writeOut(opts.json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSweep(summary)}\n`);
    });
}
