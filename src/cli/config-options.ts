// The answer-chain flags every command that replays shares (replay, bisect-prompt, tui, worker, sweep):
// the project file (found upward from the cwd, or --config / --no-config) and the flags that
// override it. One place, so the commands agree on names and meaning.
import type { Command } from 'commander';
import { type LoadedConfig, loadConfig, withOverrides } from '../config/index.js';
import { TapedeckError } from '../recording/errors.js';

export interface ConfigCliOptions {
  /** --config FILE, or false for --no-config. */
  config?: string | false;
  /** --mocks FILE, or false for --no-mocks. */
  mocks?: string | false;
  /** --simulate ENDPOINT, or false for --no-simulate. */
  simulate?: string | false;
  /** false for --no-services. */
  services?: boolean;
  /** --seed-snapshot NAME. */
  seedSnapshot?: string;
  /** --schema-sql FILE, repeatable. */
  schemaSql?: string[];
}

/** Adds the flags to a command. */
export function addConfigOptions(command: Command): Command {
  return command
    .option('--config <file>', 'the project file (default: tapedeck.config.ts|js|json|yaml found upward from the cwd)')
    .option('--no-config', 'use no project file')
    .option('--mocks <file>', 'a module exporting msw request handlers for calls the recording cannot serve')
    .option('--no-mocks', "leave the project file's mocks out")
    .option(
      '--simulate <endpoint>',
      'let a model at this OpenAI-compatible endpoint write answers no other answerer gives',
    )
    .option('--no-simulate', "leave the project file's simulator out")
    .option('--no-services', "leave the project file's sandbox services out")
    .option(
      '--seed-snapshot <name>',
      "seed the database sandbox from this named development snapshot (tapedeck snapshot save) with the recorded run's rows laid over it",
    )
    .option(
      '--schema-sql <file>',
      'SQL of your own (your migrations: functions, triggers) run in the sandbox database before the agent starts; repeatable',
      (file: string, files: string[] = []) => [...files, file],
    );
}

/** The project file with the flags applied (flags win). */
export async function configFromOptions(options: ConfigCliOptions, cwd = process.cwd()): Promise<LoadedConfig> {
  if (options.simulate !== undefined && options.simulate !== false && !URL.canParse(options.simulate))
    throw new TapedeckError('BAD_OPTION', `--simulate ${JSON.stringify(options.simulate)} is not a URL`);
  const loaded = await loadConfig({ cwd, ...(options.config !== undefined ? { file: options.config } : {}) });
  return withOverrides(loaded, {
    cwd,
    ...(options.mocks !== undefined ? { mocks: options.mocks } : {}),
    ...(options.simulate === false
      ? { simulate: false as const }
      : options.simulate !== undefined
        ? { simulate: { endpoint: options.simulate } }
        : {}),
    ...(options.services === false ? { services: false as const } : {}),
    ...(options.seedSnapshot !== undefined ? { seedSnapshot: options.seedSnapshot } : {}),
    ...(options.schemaSql !== undefined ? { schemaSql: options.schemaSql } : {}),
  });
}
