// record(options, fn): records whatever fn does in this process (production handlers, tests),
// with the same capture layer the child preload uses, wired straight to the session.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { RECORD_PRELOAD } from './command.js';
import { openRecording, type RecordOptions, shouldSample } from './recorder.js';
import { findSdkVersions } from './sdk-versions.js';
import { tool } from './tool.js';

interface CaptureSink {
  send(message: unknown): void;
  sync(message: Record<string, unknown>): Promise<unknown>;
}
interface CaptureModule {
  installCapture(
    sink: CaptureSink,
    options: { maxBody?: number; syncWorld?: boolean; nondeterminism?: boolean },
  ): () => void;
}

export interface RecordContext {
  /** The recording folder ('' when this run was not sampled). */
  dir: string;
  /** tool(name, fn) bound to this recording (the module-level tool() works too). */
  tool: typeof tool;
}

export interface RecordResult<T> {
  dir: string;
  result: T;
  recorded: boolean;
  steps: number;
}

let active = false;

/**
 * Records fn's HTTP/LLM calls, tool() calls and world changes into a recording.
 * One recording at a time per process. If fn throws, the recording is closed `incomplete`
 * with every finished step, and the error is rethrown.
 *
 * @example
 * const { dir } = await record({ name: 'support-ticket-42', fsRoot: './work' }, () => runAgent(ticket));
 */
export async function record<T>(
  options: RecordOptions,
  fn: (ctx: RecordContext) => Promise<T> | T,
): Promise<RecordResult<T>> {
  if (!shouldSample(options.sample)) {
    return { dir: '', result: await fn({ dir: '', tool }), recorded: false, steps: 0 };
  }
  if (active) throw new Error('record(): another in-process recording is already running in this process');
  active = true;
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const command = [process.argv0, ...process.argv.slice(1)];
  let recording: Awaited<ReturnType<typeof openRecording>>;
  try {
    recording = await openRecording(
      { ...options, cwd, name: options.name ?? 'in-process' },
      { command, cwd, ...(process.argv[1] ? { entry: process.argv[1] } : {}) },
      { sdkVersions: findSdkVersions([cwd]) },
    );
  } catch (error) {
    active = false;
    throw error;
  }
  const { session, writer } = recording;
  writer.append({ type: 'run.started', stepId: 0, payload: { command, cwd, pid: process.pid } });
  const capture = (await import(pathToFileURL(RECORD_PRELOAD).href)) as CaptureModule;
  let nextSync = 1;
  const dispose = capture.installCapture(
    {
      send: (message) => session.accept(message),
      sync: (message) => new Promise((resolve) => session.accept({ ...message, t: 'sync', n: nextSync++ }, resolve)),
    },
    {
      maxBody: options.maxBodyBytes ?? -1,
      syncWorld: recording.syncWorld,
      nondeterminism: options.nondeterminism ?? false,
    },
  );
  let result: T;
  try {
    result = await fn({ dir: writer.dir, tool });
  } catch (error) {
    dispose();
    active = false;
    await recording.finish({ status: 'incomplete', exitCode: 1 });
    throw error;
  }
  dispose();
  active = false;
  await recording.finish({ status: 'complete', exitCode: 0 });
  return { dir: writer.dir, result, recorded: true, steps: session.steps };
}
