// `tapedeck replay <recording> [options] [-- <command…>]`: re-runs an agent against a recording in the sandbox.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { DbSandboxKind } from '../../../sandbox/db.js';
import { parseDuration } from '../../config/duration.js';
import { redactDbUrl } from '../../postgres/sql.js';
import { TapedeckError } from '../../recording/errors.js';
import { describeProvenance } from '../../recording/provenance.js';
import type { MissPolicy, ReplayMode, ReplayResult, Timing } from '../../replay/types.js';
import { describeVersionChanges } from '../../replay/version-changes.js';
import { localRecording } from '../../store/recordings/index.js';
import { addConfigOptions, type ConfigCliOptions, configFromOptions } from '../config-options.js';
import { EXIT_INTERRUPTED, EXIT_TIMED_OUT } from '../exit-codes.js';
import { writeErr, writeOut } from '../output.js';

interface ReplayCliOptions extends ConfigCliOptions {
  mode?: string;
  systemPrompt?: string;
  promptPatch?: string;
  promptFor?: string;
  forkAt?: string;
  until?: string;
  modelEndpoint?: string;
  onMiss?: string;
  timing: string;
  out?: string;
  db?: string;
  dbSandbox?: string;
  env?: string[];
  json?: boolean;
  isolation?: string;
  requireIsolation?: boolean;
  dbOrder?: boolean;
  rules?: string;
  trustRecording?: boolean;
  timeout?: string;
  wallTimeout?: string;
}

function stepNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new TapedeckError('BAD_OPTION', `${flag} ${JSON.stringify(value)} is not a step number (1, 2, …)`);
  return n;
}

export function parseTiming(value: string): Timing {
  if (value === 'none' || value === 'original') return { kind: value };
  const m = /^scaled:(\d+(?:\.\d+)?)$/.exec(value);
  if (m) return { kind: 'scaled', factor: Number(m[1]) };
  throw new TapedeckError(
    'BAD_OPTION',
    `--timing ${JSON.stringify(value)} is not none, original or scaled:X (e.g. scaled:0.5)`,
  );
}

async function readText(flag: string, file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new TapedeckError('BAD_OPTION', `${flag}: cannot read ${file}: ${(error as Error).message}`);
  }
}

/** The result for a person; `told` are the warnings already said on stderr before the agent ran. */
function printResult(result: ReplayResult, told: ReadonlySet<string>): void {
  const lines = [
    ...(result.isolation ? [result.isolation.summary] : []),
    `replay ${result.status}: ${result.dir}`,
    `  answers: ${describeProvenance(result.served) || 'none'}`,
  ];
  if (result.cutAt !== undefined)
    lines.push(
      `  the recording stops at step ${result.cutAt} (its recorder was killed before closing it): replayed up to there, the end state compared with the world the recording knows at that step`,
    );
  if (result.savedCost.calls > 0) {
    const usd = result.savedCost.usd === undefined ? '' : ` ($${result.savedCost.usd.toFixed(4)})`;
    lines.push(`  model calls served from the recording (cost saved): ${result.savedCost.calls}${usd}`);
  }
  const shown = new Set(told);
  if (result.divergences.length === 0) lines.push('  no divergence');
  else {
    lines.push(`  ${result.divergences.length} divergence(s); first at step ${result.firstDivergentStep}:`);
    for (const d of result.divergences.slice(0, 10)) lines.push(`    step ${d.step} ${d.kind}: ${d.message}`);
    if (result.divergences.length > 10) lines.push(`    … ${result.divergences.length - 10} more (--json for all)`);
    // Packages at other versions than recorded may be the cause: said here, though said before the run.
    if (result.versionChanges !== undefined) {
      const changed = describeVersionChanges(result.versionChanges);
      lines.push(`  warning: ${changed}`);
      shown.add(changed);
    }
  }
  if (result.heldBack.length > 0) {
    lines.push('  held back (never sent):');
    for (const h of result.heldBack) {
      const body = h.body === undefined ? '' : ` ${JSON.stringify(h.body).slice(0, 200)}`;
      lines.push(`    step ${h.step} ${h.method} ${h.target}${body}${h.mutating ? '  [side effect]' : ''}`);
    }
  }
  for (const c of result.sideChannels ?? []) {
    lines.push(`  side channel refused: ${c.how} to ${c.target}${c.process ? ` by ${c.process}` : ''}`);
  }
  if (result.blockedConnections.length > 0)
    lines.push(`  connections blocked: ${result.blockedConnections.join(', ')}`);
  if (result.worldMatches !== undefined) {
    lines.push(
      result.worldMatches ? '  end state equals the recorded end state' : '  end state differs from the recorded one:',
    );
    for (const d of (result.worldDiff ?? []).slice(0, 10)) lines.push(`    ${d}`);
    const clock = result.worldServerClock ?? [];
    if (clock.length > 0) {
      lines.push(`  server clock (columns the database fills with now(), evaluated again in the sandbox):`);
      for (const d of clock.slice(0, 10)) lines.push(`    ${d}`);
      if (clock.length > 10) lines.push(`    … ${clock.length - 10} more`);
    }
  }
  if (result.worldDir) lines.push(`  world of the stop step materialised in ${result.worldDir} (fs/, db.json)`);
  if (result.worldDb) lines.push(`  its database is kept at ${result.worldDb} (drop it when done)`);
  for (const w of result.warnings ?? []) if (!shown.has(w)) lines.push(`  warning: ${w}`);
  writeOut(`${lines.join('\n')}\n`);
}

export function register(program: Command): void {
  const command = program
    .command('replay')
    .description(
      'Runs the agent again (the recorded command, or the one after --) with a replay preload. Every HTTP call and tool result is answered from the recording; clock, random and uuid values come from it too; files under the recorded fs root live in memory (memfs) and the database is a sandbox seeded from the recorded snapshot (PGlite by default). Nothing real is touched: any other connection is blocked and reported. The replay is written as a new recording (manifest.replayOf).\n\n' +
        'exact: the agent must reproduce its trajectory; every deviation is a divergence (step, expected, actual, field diff).\n' +
        'counterfactual: model calls go live (to the recorded host or --model-endpoint) unless identical to a recorded one (then served, and the cost is saved); tool calls are served when they match; a tool call the recording cannot serve goes down the answer chain of the project file (tapedeck.config.*: sandbox services re-hosting your own APIs against the sandbox database, msw mocks, a simulator) and is otherwise never sent: a divergence, listed as held back, and the agent gets --on-miss. Every answer carries its provenance: recorded, sandbox, mock, simulated, live or held back.',
    )
    .argument(
      '<recording>',
      'the recording folder (e.g. recordings/examples/openai-baseline), or <store>/<id> (pg://…, file://…, s3://…)',
    )
    .argument(
      '[command...]',
      'the agent command after `--` (default: the recorded one, when this machine made the recording or --trust-recording is given)',
    )
    .option(
      '--mode <mode>',
      'exact or counterfactual (default: exact; counterfactual when --system-prompt or --prompt-patch changes the prompt)',
    )
    .option(
      '--system-prompt <file>',
      "replace the agent's system prompt with this file (in a run of several agents: the first agent's, or --prompt-for's; the others' calls go out as they were)",
    )
    .option(
      '--prompt-patch <file>',
      "apply this unified diff to the agent's system prompt (in a run of several agents: the prompt it applies to, or --prompt-for's)",
    )
    .option(
      '--prompt-for <text>',
      'which agent --system-prompt or --prompt-patch changes: the one whose recorded system prompt contains this text',
    )
    .option('--fork-at <k>', 'steps before k come wholly from the recording, then counterfactual rules apply')
    .option('--until <k>', 'stop at step k and materialise its world into <out>/world (fs/ and db.json)')
    .option('--model-endpoint <url>', 'where live model calls go (default: the host the agent calls)')
    .option(
      '--on-miss <policy>',
      'unmatched tool calls: fail (network error) or error-response (HTTP 503 the agent sees)',
    )
    .option('--timing <timing>', 'streamed chunks: none, original or scaled:X', 'none')
    .option('--out <dir>', 'replay recording folder (default: recordings/<id>/)')
    .option('--db <url>', 'seed the database sandbox as a template-cloned database on this Postgres server')
    .option('--db-sandbox <kind>', 'pglite (default), template (needs --db) or testcontainers (needs Docker)')
    .option(
      '--db-order',
      "hand the database's replies to the agent in their recorded order, each once the agent has drawn the clock and random values it had drawn when it came: concurrent tasks that read and then draw (a uuid for a row) take their own recorded values (default in exact mode; concurrent transactions need --db-sandbox template)",
    )
    .option(
      '--no-db-order',
      "hand the database's replies over as the sandbox answers them (the default with a changed prompt)",
    )
    .option(
      '--rules <file>',
      'the tool classification rules the run was recorded with (record --rules): the calls the recording does not serve are classified by them',
    )
    .option('--env <KEY=VALUE...>', 'extra environment for the agent (e.g. TRAVEL_API_URL=http://127.0.0.1:8787)')
    .option(
      '--isolation <level>',
      'auto (default: the best this machine has), bwrap (OS sandbox), unshare (network namespace alone) or none (in-process preload alone)',
    )
    .option('--require-isolation', 'refuse to run without the OS sandbox (bubblewrap with user namespaces)')
    .option(
      '--trust-recording',
      'run the recorded command and apply the recorded env of a recording made elsewhere (read them first: a recording is data from whoever made it)',
    )
    .option(
      '--timeout <duration>',
      'stop the agent after this long without progress (no call, step, output or exit; time spent answering it, such as a live model thinking, not counted): 90s, 5m, 0 or none for never (default: the config file’s timeout, else 5m)',
    )
    .option(
      '--wall-timeout <duration>',
      'stop the agent after this long in all, progress or not (default: the config file’s wallTimeout, else none)',
    )
    .option('--json', 'print the result as JSON');
  addConfigOptions(command)
    .addHelpText(
      'after',
      `
Examples:
  tapedeck replay recordings/r1                                          # recorded here: its command runs
  tapedeck replay recordings/r1 --mode counterfactual --system-prompt fixed.txt --config examples/tapedeck.config.ts
  tapedeck replay recordings/r1 --mode counterfactual --system-prompt fixed.txt --mocks ./mocks.ts --no-services
  tapedeck replay recordings/examples/openai-baseline --trust-recording --mode counterfactual \\
      --system-prompt examples/prompts/fixed.txt --config examples/tapedeck.config.ts --model-endpoint "$OPENAI_BASE_URL"
                          # the example's fake model and its URL: npx tsx examples/world/cli.ts (prints the env)
  tapedeck replay recordings/r1 --until 4                                # time travel: the world after step 4
  tapedeck replay recordings/r1 --mode counterfactual --fork-at 5 --model-endpoint http://127.0.0.1:11434/v1
  tapedeck replay recordings/r1 --json -- node agent.mjs --stream
  tapedeck snapshot save dev --db postgres://app@127.0.0.1:5432/app_dev
  tapedeck replay recordings/prod-run --mode counterfactual --system-prompt new.txt --seed-snapshot dev
                          # a production run (observed world) replayed over a whole development database

Whose command runs: a recording made by tapedeck on this machine carries its seal, and its command runs
as recorded. A recording made elsewhere (pulled, downloaded, committed by someone else, imported) is
data: its command is shown, never run, and its env is not applied. Give the command after -- (it runs
in the sandbox as usual), or pass --trust-recording once you have read what the recording would run:
  tapedeck replay recordings/examples/openai-baseline -- node examples/agents/openai-agent.mjs
  tapedeck replay recordings/examples/openai-baseline --trust-recording
Variables that load code (NODE_OPTIONS, LD_PRELOAD, PATH, …) are never taken from a recording.

A hung agent never hangs the replay: with no progress for --timeout (or past --wall-timeout) its whole
process tree is stopped, the replay is written with the steps served so far, marked timed-out, and
one line says the last step served and what the agent was doing. Ctrl-C (or SIGTERM) does the same,
marked interrupted.

Exit code: 0 when the replay ran with no divergence, 1 when it diverged (in exact mode: also when\nthe end state differs from the recorded one) or the agent failed,
2 for bad input (no recording, other format version, missing blob, command not found, a recorded
command not run because the recording was made elsewhere), ${EXIT_TIMED_OUT} when it timed out, ${EXIT_INTERRUPTED} when interrupted.`,
    )
    .action(async (recording: string, agentCommand: string[], opts: ReplayCliOptions) => {
      // A changed prompt is a question for the model: asked again, unless --mode exact says to check
      // that the run reproduces (every model call then differs from the recording by its prompt).
      const changesPrompt = opts.systemPrompt !== undefined || opts.promptPatch !== undefined;
      opts.mode ??= changesPrompt ? 'counterfactual' : 'exact';
      if (opts.mode !== 'exact' && opts.mode !== 'counterfactual') {
        throw new TapedeckError('BAD_OPTION', `--mode ${JSON.stringify(opts.mode)} is not exact or counterfactual`);
      }
      if (opts.systemPrompt !== undefined && opts.promptPatch !== undefined) {
        throw new TapedeckError('BAD_OPTION', 'give --system-prompt or --prompt-patch, not both');
      }
      if (opts.promptFor !== undefined && opts.systemPrompt === undefined && opts.promptPatch === undefined) {
        throw new TapedeckError(
          'BAD_OPTION',
          '--prompt-for names whose prompt --system-prompt or --prompt-patch changes: give one',
        );
      }
      if (opts.promptFor?.trim() === '') throw new TapedeckError('BAD_OPTION', '--prompt-for needs text to look for');
      if (opts.onMiss !== undefined && opts.onMiss !== 'fail' && opts.onMiss !== 'error-response') {
        throw new TapedeckError('BAD_OPTION', `--on-miss ${JSON.stringify(opts.onMiss)} is not fail or error-response`);
      }
      if (opts.dbSandbox !== undefined) {
        // Loaded only when asked: the sandboxes' module brings PGlite's server and src/postgres,
        // which a replay of a run with no database never uses.
        const { DB_SANDBOX_KINDS: kinds } = await import('../../../sandbox/db.js');
        if (!(kinds as readonly string[]).includes(opts.dbSandbox)) {
          throw new TapedeckError(
            'BAD_OPTION',
            `--db-sandbox ${JSON.stringify(opts.dbSandbox)} is not ${kinds.join(', ')}`,
          );
        }
      }
      if (opts.db !== undefined && !/^postgres(ql)?:\/\//.test(opts.db)) {
        throw new TapedeckError('BAD_OPTION', `--db ${redactDbUrl(opts.db)} is not a postgres:// URL`);
      }
      if (opts.modelEndpoint !== undefined && !URL.canParse(opts.modelEndpoint)) {
        throw new TapedeckError('BAD_OPTION', `--model-endpoint ${JSON.stringify(opts.modelEndpoint)} is not a URL`);
      }
      const env: Record<string, string> = {};
      for (const pair of opts.env ?? []) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new TapedeckError('BAD_OPTION', `--env ${JSON.stringify(pair)} is not KEY=VALUE`);
        env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      const levels = ['auto', 'bwrap', 'unshare', 'none'];
      if (opts.isolation !== undefined && !levels.includes(opts.isolation)) {
        throw new TapedeckError(
          'BAD_OPTION',
          `--isolation ${JSON.stringify(opts.isolation)} is not ${levels.join(', ')}`,
        );
      }
      // The project file, before anything runs: a mistake in it is the only thing said.
      const { config } = await configFromOptions(opts);
      const { chooseIsolation } = await import('../../../sandbox/os/detect.js');
      const isolation = chooseIsolation((opts.isolation ?? 'auto') as 'auto');
      if (opts.requireIsolation && isolation.level !== 'bwrap') {
        throw new TapedeckError(
          'NO_ISOLATION',
          `--require-isolation: this machine has no OS sandbox (${isolation.notes.join('; ')}); install bubblewrap and allow user namespaces, or drop --require-isolation.`,
        );
      }

      const idleTimeoutMs = opts.timeout === undefined ? undefined : parseDuration('--timeout', opts.timeout);
      const wallTimeoutMs =
        opts.wallTimeout === undefined ? undefined : parseDuration('--wall-timeout', opts.wallTimeout);
      const forkAt = stepNumber('--fork-at', opts.forkAt);
      const until = stepNumber('--until', opts.until);
      const { replay } = await import('../../replay/replay.js');
      const told = new Set<string>();
      const result = await replay({
        recording: await localRecording(recording),
        mode: opts.mode as ReplayMode,
        ...(opts.systemPrompt !== undefined
          ? { systemPrompt: await readText('--system-prompt', opts.systemPrompt) }
          : {}),
        ...(opts.promptPatch !== undefined ? { promptPatch: await readText('--prompt-patch', opts.promptPatch) } : {}),
        ...(opts.promptFor !== undefined ? { promptFor: opts.promptFor } : {}),
        ...(forkAt !== undefined ? { forkAt } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(opts.modelEndpoint !== undefined ? { modelEndpoint: opts.modelEndpoint } : {}),
        ...(opts.onMiss !== undefined ? { onMiss: opts.onMiss as MissPolicy } : {}),
        timing: parseTiming(opts.timing),
        ...(opts.out !== undefined ? { out: opts.out } : {}),
        ...(opts.db !== undefined ? { db: opts.db } : {}),
        ...(opts.dbSandbox !== undefined ? { dbSandbox: opts.dbSandbox as DbSandboxKind } : {}),
        ...(agentCommand.length > 0 ? { command: agentCommand } : {}),
        ...(opts.trustRecording ? { trustRecording: true } : {}),
        env,
        config,
        stdio: opts.json ? 'pipe' : 'inherit',
        ...(opts.isolation !== undefined ? { isolation: opts.isolation as 'auto' } : {}),
        ...(opts.requireIsolation ? { requireIsolation: true } : {}),
        ...(opts.dbOrder !== undefined ? { dbOrder: opts.dbOrder } : {}),
        ...(opts.rules === undefined ? {} : { rules: opts.rules }),
        ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
        ...(wallTimeoutMs !== undefined ? { wallTimeoutMs } : {}),
        stopOnSignals: true,
        // What the agent runs in, said first (the fallback says what it cannot guarantee).
        ...(opts.json
          ? {}
          : {
              onIsolation: (summary: string) => writeErr(`tapedeck ${summary}\n`),
              // Then what the user should know before the agent's output (an env not applied).
              onWarning: (warning: string) => {
                told.add(warning);
                writeErr(`tapedeck warning: ${warning}\n`);
              },
            }),
      });
      if (opts.json) {
        // The agent's own output goes to stderr so stdout stays one JSON document.
        if (result.output) process.stderr.write(result.output.stdout + result.output.stderr); // the agent's own output
        writeOut(`${JSON.stringify({ ...result, output: undefined })}\n`);
      } else printResult(result, told);
      if (result.stopped) {
        // One line on stderr, whatever the format: where it stopped and what the agent was doing.
        writeErr(`tapedeck: replay ${result.stopped.message}; the replay so far is in ${result.dir}\n`);
        process.exitCode = result.status === 'interrupted' ? EXIT_INTERRUPTED : EXIT_TIMED_OUT;
        return;
      }
      // In exact mode a different end state is a divergence too; in counterfactual mode it is the point.
      const worldDiverged = opts.mode === 'exact' && result.worldMatches === false;
      process.exitCode = result.status === 'complete' && result.divergences.length === 0 && !worldDiverged ? 0 : 1;
    });
}
