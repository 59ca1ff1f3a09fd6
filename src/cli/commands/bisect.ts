// `tapedeck bisect` (belief vs world, and prompt change) and `tapedeck bisect-prompt` (prompt versions, ddmin).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  allOf,
  type BisectBeliefResult,
  BUILTIN_PREDICATES,
  bisectBelief,
  bisectPrompts,
  builtinPredicate,
  builtinPredicateHelp,
  checkMonotone,
  commandProbe,
  compareDivergence,
  type DivergenceShift,
  ddminPromptHunks,
  diskStore,
  formatBisect,
  formatDdmin,
  formatDdminProbe,
  formatProgress,
  formatPromptBisect,
  formatPromptProbe,
  formatShift,
  loadJsPredicate,
  type MonotonicityReport,
  memoryStore,
  type ProbeFn,
  type PromptVersion,
  replayProbe,
  type StepPredicate,
  shellPredicate,
  sqlPredicate,
} from '../../bisect/index.js';
import { parseDuration } from '../../config/duration.js';
import { loadContract } from '../../evaluate/index.js';
import { exitOnUsageError } from '../../recording/errors.js';
import { listRecordings, type Recording, readRecording, TapedeckError } from '../../recording/index.js';
import { createAnswerChain } from '../../replay/chain/index.js';
import { localRecording } from '../../store/recordings/index.js';
import { addConfigOptions, type ConfigCliOptions, configFromOptions } from '../config-options.js';
import { EXIT_TIMED_OUT } from '../exit-codes.js';
import { writeErr, writeOut } from '../output.js';
import { printWarnings } from '../read-recording.js';

interface BisectOptions {
  predicate?: string;
  js?: string;
  sql?: string;
  sqlFile?: string;
  shell?: string;
  good?: string;
  bad?: string;
  baseline?: string;
  compare?: boolean;
  checkMonotone?: boolean;
  json?: boolean;
}

function stepOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n))
    throw new TapedeckError('BISECT_STEP_RANGE', `${name} must be a step number, got "${value}"`);
  return n;
}

/** Builds the predicate the options ask for; several are combined (bad when any is bad). */
async function predicateFactory(opts: BisectOptions): Promise<() => StepPredicate> {
  const given = [opts.js, opts.sql ?? opts.sqlFile, opts.shell].filter((v) => v !== undefined).length;
  if (opts.sql !== undefined && opts.sqlFile !== undefined) {
    throw new TapedeckError('BISECT_PREDICATE', 'give either --sql or --sql-file, not both');
  }
  let sql = opts.sql;
  if (opts.sqlFile !== undefined) {
    if (!existsSync(opts.sqlFile))
      throw new TapedeckError('BISECT_PREDICATE', `--sql-file ${opts.sqlFile} does not exist`);
    try {
      sql = readFileSync(opts.sqlFile, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new TapedeckError(
        'BISECT_PREDICATE',
        `--sql-file ${opts.sqlFile} cannot be read (${code === 'EISDIR' ? 'a directory' : code})`,
      );
    }
  }
  const js = opts.js === undefined ? undefined : await loadJsPredicate(opts.js);
  // Built-ins run when asked for, or when no user predicate is given.
  const builtin = opts.predicate ?? (given === 0 ? 'all' : undefined);
  if (builtin !== undefined) builtinPredicate(builtin); // validates the name now
  return () => {
    const parts: StepPredicate[] = [];
    if (builtin !== undefined) parts.push(builtinPredicate(builtin));
    if (js) parts.push(js);
    if (sql !== undefined) parts.push(sqlPredicate(sql));
    if (opts.shell !== undefined) parts.push(shellPredicate(opts.shell));
    return parts.length === 1 ? parts[0]! : allOf(parts);
  };
}

async function load(ref: string): Promise<Recording> {
  const dir = await localRecording(ref);
  if (!existsSync(dir)) throw new TapedeckError('NO_RECORDING', `no recording at ${dir}`);
  const recording = await readRecording(dir);
  printWarnings(dir, recording);
  return recording;
}

/** The baseline of a replay: --baseline, or the recording named by manifest.replayOf next to it. */
async function findBaseline(recording: Recording, explicit: string | undefined): Promise<Recording | undefined> {
  if (explicit) return load(explicit);
  const id = recording.manifest.replayOf;
  if (!id) return undefined;
  for (const root of [dirname(resolve(recording.dir)), resolve('recordings')]) {
    if (!existsSync(root)) continue;
    const found = (await listRecordings(root)).find((r) => r.manifest.id === id);
    if (found) return load(found.dir);
  }
  return undefined;
}

async function runBisect(recordingDir: string, opts: BisectOptions): Promise<void> {
  const recording = await load(recordingDir);
  const make = await predicateFactory(opts);
  const good = stepOption(opts.good, '--good');
  const bad = stepOption(opts.bad, '--bad');
  // Read the baseline before searching, so a wrong --baseline fails at once, not after the bisection.
  const baseline = opts.compare !== false ? await findBaseline(recording, opts.baseline) : undefined;
  const progress = (label: string) => (p: Parameters<typeof formatProgress>[0]) =>
    writeErr(`bisect${label}: ${formatProgress(p)}\n`);
  const result: BisectBeliefResult = await bisectBelief(recording, make(), {
    ...(good === undefined ? {} : { good }),
    ...(bad === undefined ? {} : { bad }),
    onProgress: progress(''),
  });
  let monotonicity: MonotonicityReport | undefined;
  if (opts.checkMonotone) {
    monotonicity = await checkMonotone(recording, make());
    const line = monotonicity.verdicts.map((v) => `${v.step}:${v.verdict}`).join(' ');
    writeErr(`bisect: monotonicity check (${monotonicity.verdicts.length} evaluations): ${line}\n`);
  }
  let shift: DivergenceShift | undefined;
  if (opts.compare !== false) {
    if (opts.baseline === undefined && recording.manifest.replayOf && !baseline) {
      writeErr(
        `bisect: the baseline ${recording.manifest.replayOf} of this replay was not found; give --baseline DIR\n`,
      );
    }
    if (baseline) {
      // The replay was searched above; again over all its steps only when --good/--bad bounded that search.
      const replayResult =
        good === undefined && bad === undefined
          ? result
          : await bisectBelief(recording, make(), { onProgress: progress(' (replay, all steps)') });
      shift = await compareDivergence(baseline, recording, make, { onProgress: progress(' (baseline)'), replayResult });
    }
  }
  if (opts.json) {
    const data = { ...result, ...(monotonicity ? { monotonicity } : {}), ...(shift ? { promptChange: shift } : {}) };
    writeOut(`${JSON.stringify(data, null, 2)}\n`);
  } else {
    writeOut(`${formatBisect(result)}\n`);
    if (monotonicity) {
      writeOut(
        monotonicity.monotone
          ? 'monotone: yes (once bad, bad at every later step)\n'
          : `monotone: NO — good again at step ${monotonicity.reversals.join(', ')} after a bad step; the first bad step found may not be the earliest. Make the predicate judge the prefix 1..k.\n`,
      );
    }
    if (shift) writeOut(`${formatShift(shift)}\n`);
  }
  if (result.firstBad) process.exitCode = 1;
}

interface PromptOptions extends ConfigCliOptions {
  versions?: string[];
  gitFile?: string;
  revs?: string;
  ddmin?: boolean;
  from?: string;
  to?: string;
  probeCmd?: string;
  modelEndpoint?: string;
  db?: string;
  predicate?: string;
  out?: string;
  cache?: string | false;
  granularity?: string;
  contract?: string;
  trustRecording?: boolean;
  promptFor?: string;
  timeout?: string;
  wallTimeout?: string;
  json?: boolean;
}

function readText(file: string, what: string): string {
  if (!existsSync(file)) throw new TapedeckError('BISECT_PROMPT_INPUT', `${what} ${file} does not exist`);
  return readFileSync(file, 'utf8');
}

/** The versions of a prompt file in git: A, then every commit in A..B that touched it, oldest first. */
function gitVersions(file: string, revs: string): PromptVersion[] {
  const [from, to] = revs.split('..');
  if (!from || to === undefined) throw new TapedeckError('BISECT_PROMPT_INPUT', `--revs must be A..B, got "${revs}"`);
  const cwd = dirname(resolve(file));
  const git = (args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr ?? String(error);
      throw new TapedeckError('BISECT_PROMPT_INPUT', `git ${args.join(' ')} failed: ${stderr.trim()}`);
    }
  };
  const top = git(['rev-parse', '--show-toplevel']).trim();
  const path = relative(top, resolve(file));
  const commits = git(['rev-list', '--reverse', `${from}..${to || 'HEAD'}`, '--', path])
    .split('\n')
    .filter(Boolean);
  return [from, ...commits].map((rev) => ({
    label: `${rev.slice(0, 12)}:${path}`,
    text: git(['show', `${rev}:${path}`]),
  }));
}

async function runBisectPrompt(recordingDir: string, command: string[], opts: PromptOptions): Promise<void> {
  const idleTimeoutMs = opts.timeout === undefined ? undefined : parseDuration('--timeout', opts.timeout);
  const wallTimeoutMs = opts.wallTimeout === undefined ? undefined : parseDuration('--wall-timeout', opts.wallTimeout);
  const recording = await load(recordingDir);
  const predicateName = opts.predicate ?? 'all';
  builtinPredicate(predicateName);
  const contractText = opts.contract === undefined ? undefined : readText(opts.contract, '--contract');
  const contract = opts.contract === undefined ? undefined : loadContract(opts.contract);
  const judge = opts.probeCmd
    ? `command:${opts.probeCmd}`
    : contractText !== undefined
      ? `contract:${createHash('sha256').update(contractText).digest('hex')}`
      : `predicate:${predicateName}`;
  // One answer chain for every probe: its sandbox services start once and outlive each probe,
  // which gets a fresh database behind them. What answers is part of the probe cache key.
  const chain = opts.probeCmd ? undefined : createAnswerChain((await configFromOptions(opts)).config, { keep: true });
  // What runs is part of the cache key too: the command given after --, whether the recording was
  // trusted (its command and env), and whose prompt the versions are.
  const runs = [
    ...(command.length > 0 ? [`cmd:${createHash('sha256').update(JSON.stringify(command)).digest('hex')}`] : []),
    ...(opts.trustRecording ? ['trusted'] : []),
    // Whose prompt the versions replace changes every probe's replay.
    ...(opts.promptFor !== undefined ? [`for:${createHash('sha256').update(opts.promptFor).digest('hex')}`] : []),
  ];
  try {
    await bisectPromptWith(recording, opts, {
      judge: [chain ? `${judge}|chain:${chain.fingerprint}` : judge, ...(opts.probeCmd ? [] : runs)].join('|'),
      probe: opts.probeCmd
        ? commandProbe(opts.probeCmd, recording.dir)
        : replayProbe({
            recording: recording.dir,
            predicate: () => builtinPredicate(predicateName),
            ...(contract ? { contract } : {}),
            outRoot: resolve(opts.out ?? join('recordings', 'bisect-prompt')),
            ...(opts.modelEndpoint ? { modelEndpoint: opts.modelEndpoint } : {}),
            ...(opts.db ? { db: opts.db } : {}),
            ...(chain ? { chain } : {}),
            ...(command.length > 0 ? { command } : {}),
            ...(opts.trustRecording ? { trustRecording: true } : {}),
            ...(opts.promptFor !== undefined ? { promptFor: opts.promptFor } : {}),
            ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
            ...(wallTimeoutMs !== undefined ? { wallTimeoutMs } : {}),
            stopOnSignals: true,
          }),
    });
  } finally {
    await chain?.close();
  }
}

async function bisectPromptWith(
  recording: Recording,
  opts: PromptOptions,
  { judge, probe }: { judge: string; probe: ProbeFn },
): Promise<void> {
  const store = opts.cache === false ? memoryStore() : diskStore(opts.cache ?? join(tmpdir(), 'tapedeck-probe-cache'));
  const recordingId = recording.manifest.id;
  if (opts.ddmin) {
    if (!opts.from || !opts.to)
      throw new TapedeckError('BISECT_PROMPT_INPUT', '--ddmin needs --from OLD and --to NEW prompt files');
    const granularity = opts.granularity ?? 'auto';
    if (granularity !== 'auto' && granularity !== 'hunk' && granularity !== 'line') {
      throw new TapedeckError('BISECT_PROMPT_INPUT', `--granularity must be auto, hunk or line, got "${granularity}"`);
    }
    const result = await ddminPromptHunks({
      granularity,
      from: readText(opts.from, '--from'),
      to: readText(opts.to, '--to'),
      probe,
      recordingId,
      store,
      judge,
      onProbe: (p) => writeErr(`ddmin: ${formatDdminProbe(p)}\n`),
    });
    writeOut(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatDdmin(result)}\n`);
    return;
  }
  let versions: PromptVersion[];
  if (opts.versions && opts.versions.length > 0) {
    versions = opts.versions.map((file) => ({ label: file, text: readText(file, 'prompt version') }));
  } else if (opts.gitFile && opts.revs) {
    versions = gitVersions(opts.gitFile, opts.revs);
  } else {
    throw new TapedeckError(
      'BISECT_PROMPT_INPUT',
      'give --versions F1 F2 …, or --git-file PATH --revs A..B, or --ddmin --from OLD --to NEW',
    );
  }
  const result = await bisectPrompts({
    versions,
    probe,
    recordingId,
    store,
    judge,
    onProbe: (entry, n, max) => writeErr(`bisect-prompt: ${formatPromptProbe(entry, n, max)}\n`),
  });
  writeOut(opts.json ? `${JSON.stringify(result, null, 2)}\n` : `${formatPromptBisect(result)}\n`);
  // A failing version found (or among the candidates timed-out probes left) is a finding; none
  // found while probes timed out is no answer: the timed-out code.
  if (result.firstBad || result.candidates) process.exitCode = 1;
  else if (result.timedOut.length > 0) process.exitCode = EXIT_TIMED_OUT;
}

export function register(program: Command): void {
  program
    .command('bisect')
    .exitOverride(exitOnUsageError)
    .description(
      `Binary search over the steps of a recording for the first step at which a predicate over the agent's belief (its context, the claims in its outputs, the tool calls it decided and made) and the world at that step (time travel: pre snapshot + changes of steps 1..k) turns bad. At most ceil(log2 N)+1 predicate evaluations; the search path is printed to stderr as it goes.`,
    )
    .argument('<recording>', 'recording folder, or <store>/<id> (pg://…, file://…, s3://…)')
    .option('-p, --predicate <name>', `built-in predicate: ${BUILTIN_PREDICATES.join(' | ')} (default all)`)
    .option('--js <file>', 'JS/TS predicate module')
    .option('--sql <query>', 'SQL predicate against the world database at step k')
    .option('--sql-file <file>', 'SQL predicate read from a file')
    .option('--shell <cmd>', 'shell predicate run in the world folder at step k')
    .option('--good <step>', 'a step known good (default 0: before the first step)')
    .option('--bad <step>', 'a step known bad (default: the last step, evaluated first)')
    .option('--baseline <dir>', 'the baseline recording to compare a replay with (default: manifest.replayOf)')
    .option('--no-compare', 'do not compare a replay with its baseline')
    .option('--check-monotone', 'also evaluate every step to check the predicate is monotone (N evaluations)')
    .option('--json', 'print the result as JSON on stdout (progress stays on stderr)')
    .addHelpText(
      'after',
      `
The predicate at step k judges the prefix 1..k, so once bad it stays bad (the search relies on this).

Built-in predicates (--predicate):
${builtinPredicateHelp().replace(/^/gm, '  ')}

User predicates, like git bisect run (combined with --predicate when both are given):
  --js FILE     a module whose default export (belief, world, step) returns 'good' | 'bad' | 'skip' or a boolean (true = good)
  --sql QUERY   run against the world's database at step k (in-memory Postgres); rows returned = bad, or one row
                with a boolean column good/ok (true = good) or bad. The belief is there too, as tables
                tapedeck.decisions(step, call_id, name, args jsonb), tapedeck.actions(step, state_type, name, args,
                result, mutating, completed), tapedeck.observations(step, source, text), tapedeck.claims(step, text)
  --shell CMD   run with sh -c in a temp folder holding the world's files at step k: exit 0 good, 1-124 bad,
                125 skip; env TAPEDECK_STEP, TAPEDECK_WORLD_DIR, TAPEDECK_BELIEF (JSON), TAPEDECK_WORLD_DB (JSON)

Prompt change: when the recording is a replay (manifest.replayOf) and its baseline is found next to it (or given
with --baseline), both are bisected and the report says whether the divergence step moved, disappeared or stayed (unfinished: the replay stopped before it).

Exit code: 1 when a bad step is found, 0 when none, 2 on bad input.

Examples:
  tapedeck bisect recordings/examples/openai-baseline
  tapedeck bisect recordings/examples/openai-baseline --predicate grounding --json
  tapedeck bisect rec --sql "SELECT d.step FROM tapedeck.decisions d JOIN travel.passengers p
                              ON p.id = d.args->>'passenger_id' WHERE p.name <> 'Dana Reyes'"
  tapedeck bisect rec --js ./checks/no-overbooking.mjs
  tapedeck bisect rec --shell '! grep -q P-100 confirmations/*.md 2>/dev/null'     bad once a confirmation names P-100
  tapedeck bisect recordings/replay-fixed --baseline recordings/examples/openai-baseline`,
    )
    .action(async (recording: string, opts: BisectOptions) => runBisect(recording, opts));

  const prompt = program
    .command('bisect-prompt')
    .exitOverride(exitOnUsageError)
    .description(
      `Each probe replays the recording (counterfactual mode) with a prompt as its system prompt and passes when the replay is good by the built-in predicate through its last step (or, with --contract, passes the contract's hard gate). Probes are cached by (recording id, prompt text) and their cost, from the ledger, is reported.`,
    )
    .argument('<recording>', 'the recording to replay (a folder, or <store>/<id>)')
    .argument(
      '[command...]',
      'the agent command after `--` (default: the recorded one, when this machine made the recording or --trust-recording is given)',
    )
    .option('--versions <files...>', 'prompt files in order, oldest first')
    .option('--git-file <path>', 'a prompt file under git')
    .option('--revs <A..B>', 'the git revision range of --git-file')
    .option('--ddmin', 'minimise the diff --from -> --to to the hunks that flip the outcome')
    .option('--from <file>', 'the old prompt (ddmin)')
    .option('--to <file>', 'the new prompt (ddmin)')
    .option(
      '--granularity <g>',
      'ddmin changes: hunk, line (added/removed blocks split per line), auto (line when the diff is one hunk)',
      'auto',
    )
    .option('-p, --predicate <name>', 'built-in predicate a passing replay satisfies', 'all')
    .option('--contract <file>', 'judge each replay by this eval contract’s hard gate instead of the predicate')
    .option('--model-endpoint <url>', 'where the replay’s live model calls go')
    .option(
      '--prompt-for <text>',
      'in a run of several agents, the one whose prompt the versions are: its recorded system prompt contains this text (default: the run’s own)',
    )
    .option('--db <url>', 'a real Postgres server for the replays’ database sandboxes')
    .option('--probe-cmd <cmd>', 'probe with a shell command instead of a replay')
    .option(
      '--timeout <duration>',
      'stop a probe’s replay after this long without progress (a live model answering is not counted): 90s, 5m, 0 or none (default: the config file’s timeout, else 5m); a probe that times out is skipped, neither pass nor fail',
    )
    .option('--wall-timeout <duration>', 'stop a probe’s replay after this long in all (default: none)')
    .option('--out <dir>', 'where the probe replays are written', 'recordings/bisect-prompt')
    .option(
      '--trust-recording',
      'run the recorded command and apply the recorded env of a recording made elsewhere (read them first: a recording is data from whoever made it)',
    )
    .option('--cache <dir>', 'probe cache folder (default: the temp folder)')
    .option('--no-cache', 'do not reuse cached probes')
    .option('--json', 'print the result as JSON on stdout');
  addConfigOptions(prompt)
    .addHelpText(
      'after',
      `
Ordered versions: --versions F1 F2 … (files, oldest first) or --git-file PATH --revs A..B (A, then every commit in
A..B that changed PATH). Finds the first version whose replay fails, with at most ceil(log2 N)+1 replays.

Delta debugging: --ddmin --from OLD --to NEW splits the diff OLD -> NEW into hunks and finds the smallest set of
hunks that, applied to OLD alone, gives NEW's outcome (ddmin).

--probe-cmd CMD replaces the replay with a command, like git bisect run: the prompt is in $TAPEDECK_PROMPT_FILE,
exit 0 = pass.

The project file's answer chain (tapedeck.config.*) answers what a prompt version calls that the recording does
not hold: its sandbox services start once and are kept for every probe, each probe with a fresh database, so a
version that takes a new path is judged by its outcome rather than failing at its first unrecorded call.

Examples:
  tapedeck bisect-prompt recordings/r1 --versions prompts/v1.txt prompts/v2.txt prompts/v3.txt
  tapedeck bisect-prompt rec --git-file examples/prompts/baseline.txt --revs v1.0..HEAD
  tapedeck bisect-prompt recordings/examples/openai-baseline --ddmin --from examples/prompts/baseline.txt \\
      --to examples/prompts/fixed.txt --contract examples/contracts/book-flight.yaml \\
      --config examples/tapedeck.config.ts --model-endpoint "$OPENAI_BASE_URL" --trust-recording
                          # the example's fake model and its URL: npx tsx examples/world/cli.ts (prints the env)

Whose command runs: a recording made on this machine replays its recorded command; one made elsewhere (a
committed example, a pulled one) needs the command after -- (… -- node agent.mjs) or --trust-recording.

Each probe's changed prompt makes live model calls: name the model with --model-endpoint (or keep the
recorded host up); a probe whose model does not answer stops the search with the failed call.`,
    )
    .action(async (recording: string, command: string[], opts: PromptOptions) =>
      runBisectPrompt(recording, command, opts),
    );
}
