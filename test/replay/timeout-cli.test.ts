// `tapedeck replay --timeout`: a hung agent ends the command with exit 124 and one line naming the
// last step served and what the agent was doing (stdout keeps the result, --json included); a bad
// duration is a one-line error; Ctrl-C or SIGTERM stops the agent's tree and exits 130 with the
// replay written, marked interrupted.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { bin, expectOneLineError, root, tapedeck } from '../cli/run-cli.js';
import { tempDir } from '../record/helpers.js';
import { processesWith } from '../support/processes.js';
import { writeRecording } from './build.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hung-agent.mjs');

let tmp: ReturnType<typeof tempDir>;
let recording: string;
beforeAll(async () => {
  tmp = tempDir('tapedeck-timeout-cli-');
  recording = await writeRecording(path.join(tmp.dir, 'rec'), {
    calls: [{ kind: 'tool', url: 'http://api.test/items', response: { items: [1, 2] } }],
  });
});
afterAll(() => tmp?.remove());

describe('tapedeck replay --timeout', () => {
  it('a hung agent: exit 124, one line on stderr, the replay written as timed-out', async () => {
    const token = `cli-${randomBytes(6).toString('hex')}`;
    const out = path.join(tmp.dir, 'timed-out');
    const run = await tapedeck(
      [
        'replay',
        recording,
        '--isolation',
        'none',
        '--timeout',
        '5s',
        '--out',
        out,
        '--',
        process.execPath,
        AGENT,
        'child',
        token,
      ],
      { timeoutMs: 120_000 },
    );
    expect(run.code).toBe(124);
    const line = run.stderr.split('\n').find((l) => l.startsWith('tapedeck: replay timed out'));
    expect(line).toMatch(
      /^tapedeck: replay timed out: no progress for 5s \(the idle limit\) after step 1 \(GET http:\/\/api\.test\/items\); the agent was waiting: .*; the replay so far is in /,
    );
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(run.stdout).toMatch(/^replay timed-out: /m);
    expect(processesWith(token)).toEqual([]);
    expect((await readRecording(out)).manifest.status).toBe('timed-out');
    // Every reader says so: verify lists its status.
    const verified = await tapedeck(['verify', out]);
    expect(verified.stdout + verified.stderr).toMatch(/timed out: no progress for 5s/);
  });

  it('--json reports it', async () => {
    const run = await tapedeck(
      [
        'replay',
        recording,
        '--json',
        '--isolation',
        'none',
        '--timeout',
        '5s',
        '--out',
        path.join(tmp.dir, 'json'),
        '--',
        process.execPath,
        AGENT,
        'busy',
        `json-${randomBytes(4).toString('hex')}`,
      ],
      { timeoutMs: 120_000 },
    );
    expect(run.code).toBe(124);
    const result = JSON.parse(run.stdout) as {
      status: string;
      stopped: { reason: string; lastStep: number; doing: string };
    };
    expect(result.status).toBe('timed-out');
    expect(result.stopped).toMatchObject({ reason: 'idle', lastStep: 1 });
    expect(result.stopped.doing).toMatch(/computing/);
  });

  it('a bad duration is a one-line error', async () => {
    expectOneLineError(
      await tapedeck(['replay', recording, '--timeout', '5 minutes', '--', process.execPath, '-e', '']),
      /--timeout: "5 minutes" is not a duration: give 90s, 5m/,
    );
  });

  it('SIGTERM (or Ctrl-C) to tapedeck: the agent tree stops, exit 130, the replay marked interrupted', async () => {
    const token = `int-${randomBytes(6).toString('hex')}`;
    const out = path.join(tmp.dir, 'interrupted');
    const child = spawn(
      process.execPath,
      [
        bin,
        'replay',
        recording,
        '--isolation',
        'none',
        '--timeout',
        'none',
        '--out',
        out,
        '--',
        process.execPath,
        AGENT,
        'child',
        token,
      ],
      { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // The agent, its child and its detached grandchild are up once the agent's call was served.
    const deadline = Date.now() + 60_000;
    while (processesWith(token).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(processesWith(token).length).toBeGreaterThanOrEqual(3);
    child.kill('SIGTERM');
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/tapedeck: replay interrupted by SIGTERM (after step 1|before any step)/);
    expect(processesWith(token)).toEqual([]);
    const written = await readRecording(out);
    expect(written.manifest.status).toBe('interrupted');
    expect(written.manifest.stopped).toMatchObject({ reason: 'interrupted', signal: 'SIGTERM' });
  }, 120_000);
});
