// Issue 21's small items at the command line: no password in an error, a bad --fs refused, the
// value after a secret-named flag redacted, and what a killed process left removed by the next
// command (or by `tapedeck doctor`).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/recording/index.js';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-untrusted-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('untrusted input at the command line', () => {
  it('never echoes the password of a --db that is not a Postgres URL', async () => {
    const run = await tapedeck(['record', '--db', 'mysql://u:hunter2pw@h/db', '--', 'node', '-e', '1']);
    expectOneLineError(run, /--db .* is not a postgres:\/\/ URL/);
    expect(run.stderr).not.toContain('hunter2pw');
    const replay = await tapedeck(['replay', example('openai-baseline'), '--db', 'hunter2pw']);
    expectOneLineError(replay, /is not a postgres:\/\/ URL/);
    expect(replay.stderr).not.toContain('hunter2pw');
  }, 120_000);

  it('refuses a --fs that is missing or not a folder, before anything runs', async () => {
    const file = path.join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const missing = await tapedeck([
      'record',
      '--fs',
      path.join(tmp, 'nope'),
      '--out',
      path.join(tmp, 'r1'),
      '--',
      'node',
      '-e',
      '1',
    ]);
    expectOneLineError(missing, /--fs .*: no such folder/);
    const notDir = await tapedeck(['record', '--fs', file, '--out', path.join(tmp, 'r2'), '--', 'node', '-e', '1']);
    expectOneLineError(notDir, /--fs .*: not a folder/);
    expect(existsSync(path.join(tmp, 'r1')) || existsSync(path.join(tmp, 'r2'))).toBe(false);
  }, 120_000);

  it('redacts the value after a secret-named flag in a command line', () => {
    const r = createRedactor({ key: 'k' });
    const out = r.argv([
      'node',
      'agent.mjs',
      '--token',
      'tok-123',
      '--api-key',
      'k-9',
      '-password',
      'pw',
      '--max-tokens',
      '50',
      '--name',
      'x',
    ]);
    expect(out.slice(0, 2)).toEqual(['node', 'agent.mjs']);
    for (const at of [3, 5, 7]) expect(out[at]).toMatch(/^\[REDACTED:hmac:[0-9a-f]{12}\]$/);
    expect(out.slice(8)).toEqual(['--max-tokens', '50', '--name', 'x']);
    // The same in any JSON payload that holds a command line (run.started's command).
    expect(r.json({ command: ['a', '--secret', 's3'] }).command[2]).toBe(r.placeholder('s3'));
  });

  it('removes what a dead tapedeck process left: by any command, and by doctor', async () => {
    const state = path.join(tmp, 'state');
    const entry = (name: string) => {
      const left = path.join(tmp, name);
      mkdirSync(left);
      writeFileSync(path.join(left, 'config.json'), '{}');
      mkdirSync(path.join(state, 'live'), { recursive: true });
      // pid 2^22+1 is above Linux's pid_max default: no such process.
      writeFileSync(
        path.join(state, 'live', `${name}.json`),
        JSON.stringify({ pid: 4194305, start: '1', items: [{ kind: 'path', path: left }] }),
      );
      return left;
    };
    const env = { TAPEDECK_STATE_DIR: state };
    const a = entry('tapedeck-replay-deadbeef0001');
    expect((await tapedeck(['verify', example('openai-baseline')], { env })).code).toBe(0);
    expect(existsSync(a)).toBe(false);
    const b = entry('tapedeck-replay-deadbeef0002');
    const doctor = await tapedeck(['doctor'], { env });
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain(`removed  ${b}`);
    expect(existsSync(b)).toBe(false);
    expect((await tapedeck(['doctor'], { env })).stdout).toBe('nothing left behind\n');
    // Only tapedeck's own names: an entry naming another path removes nothing.
    const other = path.join(tmp, 'precious');
    mkdirSync(other);
    writeFileSync(
      path.join(state, 'live', 'x.json'),
      JSON.stringify({ pid: 4194305, start: '1', items: [{ kind: 'path', path: other }] }),
    );
    await tapedeck(['doctor'], { env });
    expect(existsSync(other)).toBe(true);
  }, 180_000);
});
