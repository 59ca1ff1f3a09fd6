// The CLI loads only the command being run: `--version`, `verify` and `ledger` never import the
// database drivers, the TUI, YAML, the container runtime or the AWS codecs (the start-up budget of
// issue 22).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { buildProgram, commandNameOf } from '../../src/cli/program.js';
import { bin, example, root } from '../cli/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-lazy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const HEAVY = [
  'pg',
  '@electric-sql/pglite',
  'ink',
  'react',
  'yaml',
  'testcontainers',
  'pg-boss',
  'memfs',
  // Bedrock's event streams and SigV4, loaded when a recording has them (~40 ms of CPU each start).
  '@smithy/core',
  '@smithy/signature-v4',
];

/** The packages (bare specifiers) a `tapedeck …` process imported. */
function packagesLoadedBy(args: string[], name: string): Promise<string[]> {
  const log = join(tmp, `${name}.log`);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', join(root, 'test/package/loaded-modules.mjs'), bin, ...args],
      { cwd: root, env: { ...process.env, TAPEDECK_LOADED_LOG: log }, timeout: 60_000 },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(`${args.join(' ')} failed: ${stderr}`));
        else {
          let text = '';
          try {
            text = readFileSync(log, 'utf8');
          } catch {}
          resolve([...new Set(text.split('\n').filter(Boolean))]);
        }
      },
    );
  });
}

const packageOf = (specifier: string): string =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] as string);

describe('the CLI loads only the command it runs', () => {
  it('--version, verify and ledger import no database driver, TUI, YAML or container runtime', async () => {
    const runs = await Promise.all([
      packagesLoadedBy(['--version'], 'version'),
      packagesLoadedBy(['verify', example('openai-baseline')], 'verify'),
      packagesLoadedBy(['ledger', example('openai-baseline')], 'ledger'),
    ]);
    for (const loaded of runs) {
      const heavy = loaded.map(packageOf).filter((p) => HEAVY.includes(p));
      expect(heavy).toEqual([]);
    }
    // The hook does see packages: `verify` reads recordings through zod.
    expect(runs[1]?.map(packageOf)).toContain('zod');
  });

  it('every entry of the command table loads a module that defines that command', async () => {
    const program = await buildProgram({ all: true });
    const names = program.commands.map((c) => c.name());
    expect(names.sort()).toEqual(COMMANDS.map((c) => c.name).sort());
    for (const entry of COMMANDS) {
      const command = program.commands.find((c) => c.name() === entry.name);
      expect(command?.summary()).toBe(entry.summary);
    }
  });

  it('finds the command in a command line', () => {
    expect(commandNameOf(['ledger', 'x', '--json'])).toBe('ledger');
    expect(commandNameOf(['--no-color', 'verify', 'x'])).toBe('verify');
    expect(commandNameOf(['help', 'eval'])).toBe('eval');
    expect(commandNameOf(['--version'])).toBeUndefined();
  });
});
