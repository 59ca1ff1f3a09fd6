// The `tapedeck` command line: one commander program, one file per command in commands/.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { isTapedeckError } from '../recording/errors.js';

// Each command module exports `register(program)`. Add a line here when a command lands.
const COMMANDS: Array<() => Promise<{ register(program: Command): void }>> = [
  () => import('./commands/tui.js'),
  () => import('./commands/verify.js'),
  () => import('./commands/ledger.js'),
  () => import('./commands/ingest.js'),
  () => import('./commands/query.js'),
  () => import('./commands/worker.js'),
  () => import('./commands/record.js'),
  () => import('./commands/bisect.js'),
  () => import('./commands/diff.js'),
  () => import('./commands/replay.js'),
  () => import('./commands/eval.js'),
];

for (const stream of [process.stdout, process.stderr]) {
  // A closed pipe (`tapedeck ... | head`) is not an error worth a stack trace.
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function buildProgram(): Promise<Command> {
  const program = new Command('tapedeck')
    .description(
      'Record an LLM agent run once, replay it deterministically in a sandbox, bisect where it went wrong, and score it.',
    )
    .version(version(), '-V, --version', 'print the tapedeck version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Start here:
  npm run demo                                         the example world, end to end
  tapedeck record --fs ./workspace -- node agent.js    record a run into recordings/<id>/
  tapedeck replay recordings/<id>                      replay it exactly, nothing real touched
  tapedeck replay recordings/<id> --mode counterfactual --system-prompt new.txt
  tapedeck bisect recordings/<id>                      first step where belief and world part
  tapedeck eval recordings/<id> --contract task.yaml   hard gate, soft score, failure codes
  tapedeck ledger recordings/<id>                      tokens, cost, latency per step
  tapedeck tui                                         browse, time-travel, replay, bisect

Exit codes: 0 ok; 1 a finding (divergence, bad step, failed gate, bad recording); 2 bad input.
Run 'tapedeck <command> --help' for each command's options and examples.`,
    );
  for (const load of COMMANDS) (await load()).register(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = await buildProgram();
  try {
    if (argv.length <= 2) {
      // A bare `tapedeck` opens the TUI in a terminal, and teaches the commands anywhere else.
      if (process.stdin.isTTY && process.stdout.isTTY) {
        const { runTui } = await import('./commands/tui.js');
        await runTui();
      } else program.outputHelp();
      return;
    }
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // A usage mistake (unknown command or option, missing argument) is bad input: exit 2, as
      // everywhere else, so that 1 keeps meaning a finding.
      process.exitCode = error.exitCode === 1 ? 2 : error.exitCode;
      return;
    }
    if (isTapedeckError(error)) {
      process.stderr.write(`tapedeck: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
}

await main(process.argv);
