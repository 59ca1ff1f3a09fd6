// Whose command a replay runs. A recording is data: its command runs, and its env is applied, only
// when this machine sealed it (src/recording/seal.ts) or the caller trusts it (--trust-recording);
// a command the caller gives (after --) always runs. Decided once per replay, before anything starts.
import { hasLocalSeal, type Manifest, TapedeckError } from '../recording/index.js';
import type { ReplayOptions } from './types.js';

export interface RecordingTrust {
  /** The recorded command may run and the recorded env may be applied. */
  trusted: boolean;
  /** Why not, for the refusal: no seal at all, or a seal this machine's key does not verify. */
  seal: 'verified' | 'missing' | 'wrong';
}

/** Whether a replay may run what the recording says to run. */
export function recordingTrust(manifest: Manifest, options: Pick<ReplayOptions, 'trustRecording'>): RecordingTrust {
  const seal = manifest.seal === undefined ? 'missing' : hasLocalSeal(manifest) ? 'verified' : 'wrong';
  return { trusted: seal === 'verified' || options.trustRecording === true, seal };
}

// C0 and C1 controls, DEL, and the bidirectional overrides that reorder what a terminal shows.
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const SHELL_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word of hostile data as a shell would take it: controls replaced by '?', quoted when needed. */
function shellWord(word: string): string {
  const clean = word.replace(UNSHOWABLE, '?');
  if (clean !== '' && SHELL_SAFE.test(clean)) return clean;
  return `'${clean.replace(/'/g, `'\\''`)}'`;
}

/** A recorded command line shown on one line of a terminal, whatever it holds, at most `max` characters. */
export function showCommand(argv: readonly string[], max = 300): string {
  const text = argv.map(shellWord).join(' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The one-line refusal: what would have run, and the two ways to run something. */
export function untrustedCommandError(
  recordingPath: string,
  trust: RecordingTrust,
  command: readonly string[],
  cwd: string,
): TapedeckError {
  const why =
    trust.seal === 'missing'
      ? 'this recording was not made on this machine (it carries no seal of this machine)'
      : "this recording's seal does not verify on this machine (made elsewhere, or its command, cwd or env changed since)";
  const shown = showCommand(command);
  return new TapedeckError(
    'UNTRUSTED_RECORDING',
    `${why}, so its command is not run: ${shown} (in ${showCommand([cwd], 200)}). Give the command after --, e.g. tapedeck replay ${showCommand([recordingPath], 200)} -- ${shown}, or pass --trust-recording.`,
  );
}
