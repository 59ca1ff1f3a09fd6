// The `tapedeck` command line: one commander program, one file per command in commands/.
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

export async function buildProgram(): Promise<Command> {
  const program = new Command('tapedeck')
    .description(
      'Record an LLM agent run once, replay it deterministically in a sandbox, bisect where it went wrong, and score it.',
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
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
      process.exitCode = error.exitCode;
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
