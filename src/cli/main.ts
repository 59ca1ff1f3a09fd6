// The `tapedeck` command line: one commander program; each command lives in commands/<name>.ts and
// is listed in commands/index.ts. Only the command being run is loaded (see commands/index.ts).
import { CommanderError } from 'commander';
import { isTapedeckError } from '../recording/errors.js';
import { writeErr } from './output.js';
import { buildProgram, commandNameOf } from './program.js';

for (const stream of [process.stdout, process.stderr]) {
  // A closed pipe (`tapedeck ... | head`) is not an error worth a stack trace.
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** The --db URLs of a command line (their passwords may be needed to remove a dead run's database objects). */
function dbUrlsOf(args: string[]): string[] {
  const urls: string[] = [];
  for (let i = 0; i < args.length && args[i] !== '--'; i++) {
    const arg = args[i] as string;
    if (arg === '--db' && args[i + 1] !== undefined) urls.push(args[i + 1] as string);
    else if (arg.startsWith('--db=')) urls.push(arg.slice('--db='.length));
  }
  return urls;
}

async function reapQuietly(args: string[]): Promise<void> {
  try {
    const { reapLeftovers } = await import('../../sandbox/leftovers.js');
    await reapLeftovers({ urls: dbUrlsOf(args) });
  } catch {
    // Cleaning up after others never stops the command the user asked for.
  }
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
    // What killed tapedeck processes left behind (temp folders, sockets, spools, sandbox databases,
    // capture triggers) goes first, quietly; `tapedeck doctor` does it out loud.
    if (only !== undefined && only !== 'doctor') await reapQuietly(args);
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // A usage mistake (unknown command or option, missing argument) is bad input: exit 2, as
      // everywhere else, so that 1 keeps meaning a finding.
      process.exitCode = error.exitCode === 1 ? 2 : error.exitCode;
      return;
    }
    if (isTapedeckError(error)) {
      writeErr(`tapedeck: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    throw error;
  }
}

await main(process.argv);
