// The `tapedeck` program: commander with the command table of commands/index.ts, loading only
// the command being run (the others are names and summaries for the top-level help).
import { Command } from 'commander';
import { packageVersion } from '../package.js';
import { COMMANDS, type CommandModule } from './commands/index.js';

/** The command a command line runs: its first word that is not an option (`help X` asks about X). */
export function commandNameOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') return undefined;
    if (arg.startsWith('-')) continue;
    return arg === 'help' ? args[i + 1] : arg;
  }
  return undefined;
}

/**
 * The program with `only`'s module loaded (every command's, when `only` is undefined and `all` is
 * set) and the rest as name-and-summary entries, enough for the top-level help and for commander
 * to tell an unknown command from a known one.
 */
export async function buildProgram(options: { only?: string; all?: boolean } = { all: true }): Promise<Command> {
  const program = new Command('tapedeck')
    .description(
      'Record an LLM agent run once, replay it deterministically in a sandbox, bisect where it went wrong, and score it.',
    )
    .version(packageVersion(), '-V, --version', 'print the tapedeck version')
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

Exit codes: 0 ok; 1 a finding (divergence, bad step, failed gate under eval --strict, bad recording); 2 bad input.
Run 'tapedeck <command> --help' for each command's options and examples.`,
    );
  const loaded = new Set<CommandModule['register']>();
  for (const entry of COMMANDS) {
    if (!options.all && entry.name !== options.only) continue;
    const mod = await entry.load();
    if (loaded.has(mod.register)) continue;
    loaded.add(mod.register);
    mod.register(program);
  }
  for (const entry of COMMANDS) {
    if (!program.commands.some((c) => c.name() === entry.name)) program.command(entry.name);
  }
  for (const entry of COMMANDS) program.commands.find((c) => c.name() === entry.name)?.summary(entry.summary);
  return program;
}
