// `tapedeck/vitest`: record a test's agent run once, replay it on every later run. The recording
// lives beside the test file (commit it); a run that departs from it fails the test with the
// divergences named. Two shapes: an agent called in the test's own process (withRecording), and an
// agent that is a program (runRecorded, replayTest), replayed in the sandbox with its world.
//
// Mode: `mode` option, else TAPEDECK_MODE (record | replay | auto), else auto: replay when the
// recording exists, record when it does not — except under CI (CI=true), where a missing
// recording fails the test instead of calling live services.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { type RecordCommandOptions, type RecordOptions, record, recordCommand } from '../record/index.js';
import { readRecording, TapedeckError } from '../recording/index.js';
import { type InProcessDivergence, replayInProcess } from '../replay/in-process.js';
import { replay } from '../replay/index.js';
import type { ReplayOptions, ReplayResult } from '../replay/types.js';

export type TapeMode = 'auto' | 'record' | 'replay';

export interface TapeOptions {
  /**
   * The recording's folder. Default: `__recordings__/<test file>/<test name>` beside the test
   * file, named from the current test (so a test has one recording per call of the helper).
   */
  dir?: string;
  /**
   * The recording's name under `__recordings__/<test file>/` instead of the test's name (tests
   * that give the same name share one recording).
   */
  name?: string;
  /** Default: TAPEDECK_MODE, else 'auto'. */
  mode?: TapeMode;
}

export interface WithRecordingOptions extends TapeOptions {
  /** Passed to record() when recording (world capture, redaction, …). */
  record?: Omit<RecordOptions, 'out' | 'folder' | 'store' | 'sample'>;
  /** Recorded calls the test no longer makes fail it (default true). */
  requireAllCalls?: boolean;
}

export interface RunRecordedOptions extends TapeOptions {
  /** The agent program, e.g. ['node', 'agent.mjs']. */
  command: string[];
  cwd?: string;
  /** Extra environment for the agent (recording and replay alike). */
  env?: Record<string, string>;
  /** Folder to snapshot and watch while recording; the replay runs against a copy of it. */
  fsRoot?: string;
  /** postgres:// URL of the database to snapshot and watch while recording. */
  dbUrl?: string;
  dbSchemas?: string[];
  /** Passed to recordCommand() when recording. */
  record?: Omit<RecordCommandOptions, 'command' | 'cwd' | 'env' | 'fsRoot' | 'dbUrl' | 'dbSchemas' | 'out' | 'stdio'>;
  /** Passed to replay() when replaying (always exact: the program must do what it did). */
  replay?: Omit<ReplayOptions, 'recording' | 'mode' | 'out' | 'stdio' | 'cwd' | 'env' | 'command'>;
}

/** What the program did, recorded or replayed. */
export interface RecordedRun {
  mode: 'recorded' | 'replayed';
  /** The recording (made now, or replayed). */
  dir: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The replay (mode 'replayed'): its recording, provenance counts, world comparison. */
  replay?: ReplayResult;
}

/** The run departed from its recording: the test fails with what departed. */
export class DivergenceError extends TapedeckError {
  readonly divergences: readonly string[];
  /** `warnings`: what about this process differs from the recorded one (an SDK's version, say): a likely cause. */
  constructor(dir: string, divergences: readonly string[], cause?: unknown, warnings: readonly string[] = []) {
    const shown = divergences.slice(0, 8).map((d) => `  - ${d}`);
    if (divergences.length > shown.length) shown.push(`  … and ${divergences.length - shown.length} more`);
    const differs =
      warnings.length === 0
        ? ''
        : `This process is not the one recorded:\n${warnings.map((w) => `  - ${w}`).join('\n')}\n`;
    super(
      'DIVERGED',
      `the run diverged from its recording ${dir}:\n${shown.join('\n')}\n${differs}` +
        'If the change is intended, record again: TAPEDECK_MODE=record npx vitest run <this test file>',
      cause === undefined ? {} : { cause },
    );
    this.name = 'DivergenceError';
    this.divergences = divergences;
  }
}

const MODES: readonly TapeMode[] = ['auto', 'record', 'replay'];

function modeOf(options: TapeOptions): TapeMode {
  const mode = options.mode ?? process.env.TAPEDECK_MODE ?? 'auto';
  if (!(MODES as readonly string[]).includes(mode))
    throw new TapedeckError('BAD_OPTION', `TAPEDECK_MODE=${mode}: expected record, replay or auto`);
  return mode as TapeMode;
}

const isCi = (): boolean => {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
};

function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  // Long names are cut, with a hash of the whole name so two long names stay apart.
  if (s.length <= 100) return s || 'recording';
  return `${s.slice(0, 90).replace(/-+$/, '')}-${createHash('sha256').update(text).digest('hex').slice(0, 8)}`;
}

/** Test names used by this process, so two helper calls in one test get two recordings. */
const calls = new Map<string, number>();

/** The recording folder of the current test: `__recordings__/<test file>/<name or test name>[-n]`. */
export function recordingDirFor(options: Pick<TapeOptions, 'dir' | 'name'> = {}): string {
  if (options.dir !== undefined) return resolve(options.dir);
  const { currentTestName, testPath } = expect.getState();
  if (!testPath || (!currentTestName && options.name === undefined))
    throw new TapedeckError(
      'BAD_OPTION',
      'tapedeck/vitest: call it inside a test (it names the recording after the test), or pass { dir }',
    );
  const folder = join(dirname(testPath), '__recordings__', basename(testPath));
  if (options.name !== undefined) return join(folder, slug(options.name));
  const base = join(folder, slug(currentTestName as string));
  const n = (calls.get(base) ?? 0) + 1;
  calls.set(base, n);
  return n === 1 ? base : `${base}-${n}`;
}

/** Whether to record or replay at `dir`, by the mode; refuses what the mode forbids. */
function decide(dir: string, options: TapeOptions): 'record' | 'replay' {
  const mode = modeOf(options);
  const exists = existsSync(join(dir, 'manifest.json'));
  if (mode === 'record') return 'record';
  if (exists) return 'replay';
  if (mode === 'replay' || isCi())
    throw new TapedeckError(
      'NO_RECORDING',
      `no recording at ${dir}${mode === 'auto' ? ' (CI is set: tests do not record in CI)' : ''}. Record it by running the test with TAPEDECK_MODE=record, and commit the folder.`,
    );
  return 'record';
}

const describe = (d: InProcessDivergence): string => d.message;

/**
 * Runs `fn` (the agent, in this process) against its recording: the first time (or with
 * TAPEDECK_MODE=record) fn runs for real and its HTTP calls are recorded; after that every HTTP
 * call fn makes is answered from the recording, and the test fails when fn makes a call the
 * recording does not hold, or leaves a recorded call out. Returns what fn returns.
 *
 * @example
 * it('answers the refund question', async () => {
 *   const answer = await withRecording(() => supportAgent('Can I get a refund for order 7713?'));
 *   expect(answer).toMatch(/refund/);
 * });
 */
export async function withRecording<T>(fn: () => Promise<T> | T, options: WithRecordingOptions = {}): Promise<T> {
  const dir = recordingDirFor(options);
  if (decide(dir, options) === 'record') {
    rmSync(dir, { recursive: true, force: true });
    const name = expect.getState().currentTestName ?? basename(dir);
    const recorded = await record({ ...options.record, name, out: dir }, () => fn());
    return recorded.result;
  }
  const run = await replayInProcess(dir, fn, { requireAllCalls: options.requireAllCalls ?? true });
  if (run.divergences.length > 0)
    throw new DivergenceError(dir, run.divergences.map(describe), run.error, run.warnings);
  if ('error' in run) throw run.error;
  return run.result as T;
}

/**
 * Runs an agent program against its recording: records it (with its files and database when
 * given) the first time, and from then on replays it exactly in the sandbox — every call answered
 * from the recording, no live side effects — and fails on any divergence, on a different world at
 * the end, or on a run the replay could not finish. Returns the program's output either way.
 *
 * @example
 * const run = await runRecorded({ command: ['node', 'agent.mjs'], env: { OPENAI_BASE_URL: url } });
 * expect(run.stdout).toContain('BK-0001');
 */
export async function runRecorded(options: RunRecordedOptions): Promise<RecordedRun> {
  const dir = recordingDirFor(options);
  const cwd = resolve(options.cwd ?? process.cwd());
  if (decide(dir, options) === 'record') {
    rmSync(dir, { recursive: true, force: true });
    const out = { stdout: '', stderr: '' };
    const result = await recordCommand({
      ...options.record,
      name: options.record?.name ?? expect.getState().currentTestName ?? basename(dir),
      command: options.command,
      cwd,
      out: dir,
      stdio: 'pipe',
      ...(options.env ? { env: options.env } : {}),
      ...(options.fsRoot !== undefined ? { fsRoot: options.fsRoot } : {}),
      ...(options.dbUrl !== undefined ? { dbUrl: options.dbUrl } : {}),
      ...(options.dbSchemas ? { dbSchemas: options.dbSchemas } : {}),
      onSpawn: (child) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          out.stdout += chunk.toString();
        });
        child.stderr?.on('data', (chunk: Buffer) => {
          out.stderr += chunk.toString();
        });
        options.record?.onSpawn?.(child);
      },
    });
    return { mode: 'recorded', dir: result.dir, exitCode: result.exitCode, ...out };
  }
  const recording = await readRecording(dir);
  const recordedExit = recording.events.find((e) => e.type === 'run.completed')?.payload as
    | { exitCode?: number | null }
    | undefined;
  // The replay is a recording too: made in a temporary folder, never beside the committed one.
  const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-vitest-'));
  let result: ReplayResult;
  try {
    result = await replay({
      ...options.replay,
      recording: dir,
      mode: 'exact',
      // The program as the test names it now (not the recorded command line, whose paths are the
      // recording machine's): the code under test must do what the recording says.
      command: options.command,
      cwd,
      stdio: 'pipe',
      out: join(tmp, 'replay'),
      ...(options.env ? { env: options.env } : {}),
    });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const problems = result.divergences.map((d) => d.message);
  if (result.status !== 'complete') problems.push(`the replay did not complete (${result.status})`);
  if (recordedExit && 'exitCode' in recordedExit && recordedExit.exitCode !== result.exitCode)
    problems.push(`the program exited with ${result.exitCode}; recorded: ${recordedExit.exitCode}`);
  if (result.worldMatches === false)
    problems.push(`the world at the end differs from the recorded one: ${(result.worldDiff ?? []).join('; ')}`);
  if (problems.length > 0) throw new DivergenceError(dir, problems, undefined, result.warnings);
  return {
    mode: 'replayed',
    dir,
    exitCode: result.exitCode,
    stdout: result.output?.stdout ?? '',
    stderr: result.output?.stderr ?? '',
    replay: { ...result, dir: '' },
  };
}

/**
 * A vitest test around a recorded agent program: `body` gets the run (recorded or replayed) to
 * assert on. The timeout defaults to 5 minutes (recording starts the program for real).
 *
 * @example
 * replayTest('books the right passenger', { command: ['node', 'agent.mjs'], env }, (run) => {
 *   expect(run.stdout).toContain('P-102');
 * });
 */
export function replayTest(
  name: string,
  options: RunRecordedOptions,
  body: (run: RecordedRun) => Promise<void> | void,
  timeoutMs = 300_000,
): void {
  test(name, async () => body(await runRecorded(options)), timeoutMs);
}
