// The `tapedeck` command line: one commander program; each command lives in commands/<name>.ts and
// is listed in commands/index.ts. Only the command being run is loaded (see commands/index.ts).
import { CommanderError } from 'commander';
import { isTapedeckError } from '../recording/errors.js';
import { buildProgram, commandNameOf } from './program.js';

for (const stream of [process.stdout, process.stderr]) {
  // A closed pipe (`tapedeck ... | head`) is not an error worth a stack trace.
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

async function main(argv: string[]): Promise<void> {
  const args = argv.slice(2);
  const only = commandNameOf(args);
  const program = await buildProgram(only === undefined ? {} : { only });
  try {
    if (args.length === 0) {
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
