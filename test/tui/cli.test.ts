// `tapedeck tui` as a command: its help, and a clear error where there is no terminal.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const tapedeck = (...args: string[]) =>
  run('node', ['bin/tapedeck.mjs', ...args], { encoding: 'utf8' }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe('tapedeck tui (command)', () => {
  it('teaches its keys and options in --help', async () => {
    const r = await tapedeck('tui', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('[recording]');
    expect(r.stdout).toContain('--dir <dir>');
    expect(r.stdout).toContain('--contract <file>');
    expect(r.stdout).toContain('NO_COLOR');
  });

  it('says it needs an interactive terminal when stdin/stdout are pipes', async () => {
    const r = await tapedeck('tui', 'recordings/examples/openai-baseline');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tapedeck tui needs an interactive terminal');
    expect(r.stderr).not.toContain('    at ');
  });
});
