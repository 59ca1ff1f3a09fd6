// The top-level program: what `tapedeck` with no command, a wrong command or --version does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, tapedeck } from './run-cli.js';

describe('tapedeck (top level)', () => {
  it('prints the commands and where to start when it is not in a terminal', async () => {
    const run = await tapedeck([]);
    expect(run.code).toBe(0);
    for (const command of ['record', 'replay', 'bisect', 'eval', 'ledger', 'tui', 'verify']) {
      expect(run.stdout).toContain(command);
    }
    expect(run.stdout).toContain('Start here:');
  });

  it('an unknown command is bad input: exit 2 with a hint, not a stack trace', async () => {
    const run = await tapedeck(['recrod']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown command 'recrod'");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const run = await tapedeck(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(pkg.version);
  });
});
