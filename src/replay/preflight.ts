// What a replay checks and reads before anything runs: the options (and the project config's
// miss policy under them), the recording's manifest and events (every problem a TapedeckError),
// the step range, the replay's id, recorded paths moved to this checkout, and what is said of the
// recorded env before the agent's own output.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Manifest, type Recording, readManifest, readRecording, TapedeckError } from '../recording/index.js';
import type { ReplayOptions } from './types.js';

/** The project config's miss policy where the options leave it unset (the options win). */
export function withConfigPolicy(options: ReplayOptions): ReplayOptions {
  const config = options.chain?.config ?? options.config;
  if (!config) return options;
  return {
    ...options,
    ...(options.onMiss === undefined && config.onMiss ? { onMiss: config.onMiss } : {}),
    ...(config.onMissByTool ? { onMissByTool: { ...config.onMissByTool, ...options.onMissByTool } } : {}),
  };
}

export function checkOptions(options: ReplayOptions): void {
  if (options.systemPrompt !== undefined && options.promptPatch !== undefined) {
    throw new TapedeckError('BAD_OPTIONS', 'Give either a new system prompt or a prompt patch, not both.');
  }
  for (const [name, v] of [
    ['forkAt', options.forkAt],
    ['until', options.until],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) {
      throw new TapedeckError('BAD_OPTIONS', `${name} must be a step number (1 or more), got ${v}.`);
    }
  }
  if (options.timing?.kind === 'scaled' && !(options.timing.factor >= 0)) {
    throw new TapedeckError('BAD_OPTIONS', 'timing scaled:X needs a factor of 0 or more.');
  }
}

export function checkStepRange(options: ReplayOptions, recording: Recording): void {
  const lastStep = recording.events.reduce((max, e) => (e.stepId > max ? e.stepId : max), 0);
  for (const [flag, v] of [
    ['--fork-at', options.forkAt],
    ['--until', options.until],
  ] as const) {
    if (v !== undefined && v > lastStep) {
      throw new TapedeckError(
        'BAD_OPTIONS',
        `${flag} ${v} is past the recording's last step (${lastStep}); give a step from 1 to ${lastStep}.`,
      );
    }
  }
}

/** Reads a recording's manifest for replay, turning every problem into a TapedeckError. */
export async function loadManifest(dir: string): Promise<Manifest> {
  if (!existsSync(dir)) throw new TapedeckError('NO_RECORDING', `No recording at ${dir}.`);
  try {
    return await readManifest(dir);
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError('BAD_RECORDING', `Cannot read the recording at ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Reads a recording (its manifest already read) for replay, turning every problem into a TapedeckError. */
export async function loadRecording(dir: string, manifest: Manifest): Promise<Recording> {
  try {
    return await readRecording(dir, { verifyBlobs: false, manifest });
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError('BAD_RECORDING', `Cannot read the recording at ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export function replayId(originalId: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${originalId}.replay-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * A recording made in one checkout and replayed in another (a clone, a CI machine): a recorded
 * path under the recorded cwd that is missing here is taken relative to the replay's cwd, when
 * the file exists there. Anything else is left as recorded.
 */
export function relocator(recordedCwd: string, cwd: string): (value: string) => string {
  const from = path.resolve(recordedCwd);
  const to = path.resolve(cwd);
  if (from === to) return (value) => value;
  return (value) => {
    if (!value.startsWith(`${from}${path.sep}`) || existsSync(value)) return value;
    const moved = path.join(to, value.slice(from.length + 1));
    return existsSync(moved) ? moved : value;
  };
}
