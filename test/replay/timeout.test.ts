// A hung agent never hangs a replay: with no progress for the idle limit (or past the wall limit)
// the replay stops the agent's whole tree (children, a detached grandchild, workers, the OS
// sandbox), writes what it served so far marked timed-out, and says where it stopped and what the
// agent was doing. Time the replayer spends answering (a slow live model) is never idle.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { readRecording } from '../../src/recording/index.js';
import { type Answerer, replay } from '../../src/replay/index.js';
import { tempDir } from '../record/helpers.js';
import { processesWith } from '../support/processes.js';
import { writeRecording } from './build.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hung-agent.mjs');
const LEVELS = detectIsolation().level === 'bwrap' ? (['none', 'bwrap'] as const) : (['none'] as const);
// The agent's processes start (Node with the preload, each) before its one call: on a loaded
// machine that takes seconds, and a start is not progress.
const IDLE_MS = 4000;

/** Whether a process runs (a zombie waiting for its parent to reap it does not). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Resolves once at least `count` processes carry the token (bounded: fails the test after 20 s). */
async function seen(token: string, count: number): Promise<number[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pids = processesWith(token);
    if (pids.length >= count) return pids;
    if (Date.now() > deadline) throw new Error(`only ${pids.length} of ${count} processes of the agent appeared`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

let tmp: ReturnType<typeof tempDir>;
let recording: string;

beforeAll(async () => {
  tmp = tempDir('tapedeck-timeout-');
  recording = await writeRecording(path.join(tmp.dir, 'rec'), {
    calls: [{ kind: 'tool', url: 'http://api.test/items', response: { items: [1, 2] } }],
  });
});
afterAll(() => tmp?.remove());

// Each way an agent hangs, and how many of its processes carry the token (a worker is a thread).
const HANGS = [
  ['promise', 'a promise that never settles', 1],
  ['busy', 'a busy loop', 1],
  ['child', 'a child and a detached grandchild that never exit', 3],
  ['socket', 'a listening socket held open', 1],
  ['stdin', 'a child tool waiting on stdin', 2],
  ['worker', 'a worker thread in a busy loop', 1],
] as const;

describe.each(LEVELS)('a hung agent (isolation %s)', (isolation) => {
  it.each(HANGS)('%s (%s): stopped after the idle limit, nothing left running', async (mode, _what, count) => {
    const token = `hung-${randomBytes(6).toString('hex')}`;
    const started = Date.now();
    const running = replay({
      recording,
      mode: 'exact',
      command: [process.execPath, AGENT, mode, token],
      out: path.join(tmp.dir, `${isolation}-${mode}`),
      stdio: 'pipe',
      isolation,
      idleTimeoutMs: IDLE_MS,
    });
    running.catch(() => undefined);
    const pids = await seen(token, count);
    const result = await running;
    expect(result.status).toBe('timed-out');
    expect(Date.now() - started).toBeLessThan(IDLE_MS + 15_000);
    expect(result.stopped).toMatchObject({
      reason: 'idle',
      limitMs: IDLE_MS,
      lastStep: 1,
      last: 'GET http://api.test/items',
    });
    expect(result.stopped?.message).toMatch(
      /^timed out: no progress for 4s \(the idle limit\) after step 1 \(GET http:\/\/api\.test\/items\); the agent was /,
    );
    if (mode === 'busy' || mode === 'worker') expect(result.stopped?.doing).toMatch(/computing/);
    else expect(result.stopped?.doing).toMatch(/waiting/);
    // Nothing the agent started is left: not the pids seen running, not any other with its token.
    expect(processesWith(token)).toEqual([]);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
    // The replay folder holds the step served, and says it timed out.
    const written = await readRecording(result.dir);
    expect(written.manifest.status).toBe('timed-out');
    expect(written.manifest.stopped).toMatchObject({ reason: 'idle', lastStep: 1 });
    expect(written.events.filter((e) => e.type === 'http.exchange')).toHaveLength(1);
    expect(written.events.at(-1)).toMatchObject({ type: 'run.completed', payload: { status: 'timed-out' } });
    expect(written.warnings.join('\n')).toMatch(/the replay timed out: no progress for 4s/);
  });
});

describe('what is not idle', () => {
  it('a slow answer (a live model thinking) is not idle time, however long', async () => {
    const slowRecording = await writeRecording(path.join(tmp.dir, 'slow-rec'), { calls: [] });
    const slow: Answerer = {
      name: 'slow model',
      servedFrom: 'live',
      accepts: (ask) => ask.kind === 'http' && new URL(ask.request.url).hostname === 'api.test',
      async answer(ask) {
        const started = Date.now();
        // More than twice the idle limit: the replay must wait it out, not stop the agent.
        await new Promise((r) => setTimeout(r, 7000));
        return {
          url: ask.request.url,
          started,
          durationMs: Date.now() - started,
          response: { status: 200, statusText: 'OK', headers: {}, bytes: Buffer.from('{"ok":true}') },
        };
      },
    };
    const result = await replay({
      recording: slowRecording,
      mode: 'counterfactual',
      command: [
        process.execPath,
        '--input-type=module',
        '-e',
        "await fetch('http://api.test/items').then((r) => r.text())",
      ],
      out: path.join(tmp.dir, 'slow'),
      stdio: 'pipe',
      isolation: 'none',
      idleTimeoutMs: 3000,
      answerers: [slow],
    });
    expect(result.status).toBe('complete');
    expect(result.exitCode).toBe(0);
  });

  it('output is progress: an agent that prints as it works is not stopped', async () => {
    const result = await replay({
      recording,
      mode: 'counterfactual',
      command: [
        process.execPath,
        '-e',
        'let n = 0; const t = setInterval(() => { process.stdout.write("tick\\n"); if (++n === 10) clearInterval(t); }, 600);',
      ],
      out: path.join(tmp.dir, 'ticking'),
      stdio: 'ignore',
      isolation: 'none',
      idleTimeoutMs: 3000,
    });
    expect(result.status).toBe('complete');
  });

  it('the wall limit stops an agent that keeps making progress', async () => {
    const token = `wall-${randomBytes(6).toString('hex')}`;
    const result = await replay({
      recording,
      mode: 'counterfactual',
      command: [process.execPath, '-e', 'setInterval(() => process.stdout.write("tick\\n"), 50)', token],
      out: path.join(tmp.dir, 'wall'),
      stdio: 'pipe',
      isolation: 'none',
      idleTimeoutMs: 0,
      wallTimeoutMs: 1500,
    });
    expect(result.status).toBe('timed-out');
    expect(result.stopped).toMatchObject({ reason: 'wall', limitMs: 1500, lastStep: 0 });
    expect(result.stopped?.message).toMatch(/^timed out: ran past the 1500ms wall limit before any step was served/);
    expect(processesWith(token)).toEqual([]);
  });
});
