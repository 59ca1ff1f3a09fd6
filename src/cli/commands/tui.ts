// `tapedeck tui [recording]`: the terminal UI (also what a bare `tapedeck` opens).
import type { Command } from 'commander';
import type { TapedeckConfig } from '../../config/index.js';
import { exitOnUsageError } from '../../recording/errors.js';
import { localRecording } from '../../store/recordings/index.js';
import { addConfigOptions, type ConfigCliOptions, configFromOptions } from '../config-options.js';

export interface TuiCommandOptions {
  recording?: string;
  dir?: string;
  contract?: string;
  modelEndpoint?: string;
  /** The project config's answer chain for the TUI's replays. */
  config?: TapedeckConfig;
  /** Replays run the recorded command and env of recordings this machine did not seal (--trust-recording). */
  trustRecording?: boolean;
}

/** Opens the TUI. main.ts calls this for a bare `tapedeck` with no arguments. */
export async function runTui(options: TuiCommandOptions = {}): Promise<void> {
  // Loaded on demand: ink and react stay out of every other command's start-up.
  const { openTui } = await import('../../../tui/index.js');
  // A bare `tapedeck` still finds the project file upward from the cwd.
  const config = options.config ?? (await configFromOptions({})).config;
  await openTui({ ...options, config });
  // The user quit: do not let a handle an engine left open (a replay's sandbox) keep the terminal waiting.
  setTimeout(() => process.exit(), 500).unref();
}

export function register(program: Command): void {
  const tui = program
    .command('tui')
    .exitOverride(exitOnUsageError)
    .description(
      'The terminal UI. Lists the recordings under --dir; opens one in the run view: the timeline of steps (state type, tool or model, tokens, cost, latency, failures), the selected step in full (model input with its context provenance, output or tool call, observation, the world changes at that step). Step through time with j/k, jump with g<step><enter>; r replays the run with a changed system prompt and shows baseline and replay side by side; b bisects to the first step where the agent’s belief diverged from the world; l shows the ledger and scores. Press ? inside for every key.',
    )
    .argument(
      '[recording]',
      'a recording directory, the id of one under --dir, or <store>/<id> (pg://…, file://…, s3://…)',
    )
    .option('--dir <dir>', 'folder of recordings to list', 'recordings')
    .option('--contract <file>', 'eval contract (YAML) for the hard gate, soft score and failure codes')
    .option('--model-endpoint <url>', 'model endpoint for counterfactual replays')
    .option(
      '--trust-recording',
      'replays (r) run the recorded command and apply the recorded env of recordings made elsewhere (read them first: a recording is data from whoever made it)',
    );
  addConfigOptions(tui)
    .addHelpText(
      'after',
      `
Examples:
  tapedeck tui                                   pick a recording from ./recordings
  tapedeck tui recordings/examples/openai-baseline                 open a run straight away
  tapedeck tui --contract examples/contracts/book-flight.yaml      with the hard gate and scores
  EDITOR=nano tapedeck tui <recording> --model-endpoint http://127.0.0.1:8787
                                                   then r, e: edit the system prompt and replay
  tapedeck tui recordings/examples/openai-baseline --trust-recording
                                                   replay a recording made elsewhere (its command runs)

Needs an interactive terminal; works from 80x24 up. NO_COLOR=1 turns colour off.`,
    )
    .action(
      async (
        recording: string | undefined,
        opts: { dir: string; contract?: string; modelEndpoint?: string; trustRecording?: boolean } & ConfigCliOptions,
      ) => {
        await runTui({
          ...(recording ? { recording: await localRecording(recording) } : {}),
          dir: opts.dir,
          ...(opts.contract ? { contract: opts.contract } : {}),
          ...(opts.modelEndpoint ? { modelEndpoint: opts.modelEndpoint } : {}),
          ...(opts.trustRecording ? { trustRecording: true } : {}),
          config: (await configFromOptions(opts)).config,
        });
      },
    );
}
