// The names the preloads give the processes an agent starts (sandbox/preload/shared-process.mjs):
// every way Node starts a process (spawn, exec, execFile, fork and the synchronous three, with and
// without an env or args array of its own, Node or a shell) tells the child the next name, in
// order, and keeps the rest of the options it was given.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../record/helpers.js';

const FIXTURE = fileURLToPath(new URL('fixtures/name-children.mjs', import.meta.url));
const SHARED = new URL('../../sandbox/preload/shared-process.mjs', import.meta.url).href;

describe('naming child processes', () => {
  const tmp = tempDir('tapedeck-process-names-');
  afterAll(() => tmp.remove());

  it('tells processes given the same name apart by the order they claim it; a worker by its thread', () => {
    const prefix = path.join(tmp.dir, 'process-');
    const nameOf = (
      given: string | undefined,
      code = `console.log(String(m.processName(${JSON.stringify(prefix)})))`,
    ) => {
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.TAPEDECK_PROCESS;
      if (given !== undefined) env.TAPEDECK_PROCESS = given;
      return execFileSync(
        process.execPath,
        ['--input-type=module', '-e', `const m = await import(${JSON.stringify(SHARED)}); ${code}`],
        { encoding: 'utf8', env },
      ).trim();
    };
    expect([nameOf('3'), nameOf('3'), nameOf(undefined), nameOf('3.1'), nameOf(undefined), nameOf('3')]).toEqual([
      '3',
      '3#2',
      'undefined',
      '3.1',
      '#2',
      '3#3',
    ]);
    // Not a name (a hostile or stray value): the process takes none from it.
    expect(nameOf('__proto__')).toBe('#3');
    const worker = `const { Worker } = await import('node:worker_threads'); const w = new Worker(${JSON.stringify(
      `import(${JSON.stringify(SHARED)}).then((m) => console.log(m.processName(${JSON.stringify(prefix)})))`,
    )}, { eval: true }); await new Promise((r) => w.on('exit', r));`;
    expect(nameOf('4', worker)).toBe('4w1');
  });

  it('tells each process it starts the next name, whatever way it starts it', () => {
    const out = execFileSync(process.execPath, [FIXTURE], {
      encoding: 'utf8',
      env: { ...process.env, TAPEDECK_PROCESS: '' },
    });
    expect(JSON.parse(out)).toEqual([
      ['5.1', null],
      ['5.2', 'spawnSync env'],
      ['5.3', null],
      ['5.4', 'execSync env'],
      ['5.5', null],
      ['5.6', null],
      ['5.7', 'spawnSync, no args'],
      ['5.8', null],
      ['5.9', 'spawn env'],
      ['5.10', null],
      ['5.11', null],
      ['5.12', 'fork env'],
    ]);
  });
});
