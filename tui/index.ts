// The terminal UI's entry point: `openTui` reads the recording (or lists a folder of them) and
// runs the ink app full-screen until the user quits.
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TapedeckConfig } from '../src/config/index.js';
import { TapedeckError } from '../src/recording/index.js';
import { defaultServices } from './data/engines.js';
import { createPromptEditor } from './editor.js';
import { colorFromEnv } from './theme.js';

export interface OpenTuiOptions {
  /** A recording directory (or a recording id under `dir`) to open in the run view. */
  recording?: string;
  /** Folder of recordings for the list (default "recordings"). */
  dir?: string;
  /** Eval contract (YAML) for the hard gate and soft score columns. */
  contract?: string;
  /** Model endpoint for counterfactual replays (passed to the replayer). */
  modelEndpoint?: string;
  /** The project config's answer chain for the replays (sandbox services, mocks, simulator). */
  config?: TapedeckConfig;
  /** Replays run the recorded command and env of recordings this machine did not seal (--trust-recording). */
  trustRecording?: boolean;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
}

/** Resolves the `recording` argument: a directory with a manifest, else an id under `dir`. */
export function resolveRecordingDir(arg: string, dir: string): string {
  const candidates = [...new Set([resolve(arg), resolve(dir, arg)])]; // one when arg is absolute
  for (const candidate of candidates) {
    if (existsSync(join(candidate, 'manifest.json'))) return candidate;
  }
  if (existsSync(arg) && statSync(arg).isDirectory()) return resolve(arg); // let the reader say what is wrong
  throw new TapedeckError(
    'TUI_NO_RECORDING',
    `no recording at "${arg}" (looked for ${candidates.map((c) => join(c, 'manifest.json')).join(' and ')}); run \`tapedeck tui\` to pick one from ${dir}/`,
  );
}

/** ink checks the CI variable once, at import, and then draws nothing until exit: hide it while importing. */
export async function importInkInteractive() {
  const saved = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  try {
    const [ink, app, react] = await Promise.all([import('ink'), import('./app.js'), import('react')]);
    return { ink, app, react };
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
  }
}

/** Frames a second at most: 60 keeps scrolling under a 16 ms frame (ink's default is 30). */
export const RENDER_MAX_FPS = 60;

/** Runs the TUI; resolves when the user quits. */
export async function openTui(options: OpenTuiOptions = {}): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  if (!stdin.isTTY || !stdout.isTTY) {
    throw new TapedeckError(
      'TUI_NEEDS_TTY',
      'tapedeck tui needs an interactive terminal (stdin and stdout must be a TTY); in scripts use `tapedeck replay`, `tapedeck ledger` or `tapedeck eval`',
    );
  }
  const dir = options.dir ?? 'recordings';
  const services = defaultServices({
    ...(options.contract ? { contract: resolve(options.contract) } : {}),
    ...(options.modelEndpoint ? { modelEndpoint: options.modelEndpoint } : {}),
    ...(options.config ? { config: options.config } : {}),
    ...(options.trustRecording ? { trustRecording: true } : {}),
  });
  const recording = options.recording
    ? await services.readRecording(resolveRecordingDir(options.recording, dir))
    : undefined;
  const { ink, app, react } = await importInkInteractive();
  stdout.write('\x1b[?1049h\x1b[H'); // the alternate screen: the shell's scrollback is left as it was
  try {
    const instance = ink.render(
      react.createElement(app.App, {
        services,
        root: dir,
        ...(recording ? { recording } : {}),
        color: colorFromEnv(),
        editPrompt: createPromptEditor({ stdin, stdout }),
        ...(options.modelEndpoint ? { modelEndpoint: options.modelEndpoint } : {}),
      }),
      { stdin, stdout, exitOnCtrlC: true, patchConsole: true, maxFps: RENDER_MAX_FPS },
    );
    await instance.waitUntilExit();
  } finally {
    stdout.write('\x1b[?1049l');
  }
}
