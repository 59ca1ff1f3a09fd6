// Which programs a command line starts, and which of them reach a network service no capture layer
// sees: the class of tools an agent shells out to (curl, psql, a cloud CLI, a script with a URL),
// however it starts them (directly, through env, a shell string, a script's shebang).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandRuns, unwatchedProgram } from './shared-commands.mjs';
import { unhookedPython } from './shared-python.mjs';

const dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-commands-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const script = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
};
const where = { PATH: `${dir}:/usr/bin:/bin`, cwd: dir };

describe('unwatchedProgram', () => {
  it.each([
    [['curl', '-s', 'https://api.example.com/v1'], 'curl'],
    [['/usr/bin/curl', '-X', 'POST', 'http://127.0.0.1:8080/x'], 'curl'],
    [['wget', '-qO-', 'example.com'], 'wget'],
    [['psql', '-c', 'select 1'], 'psql'],
    [['env', 'PGHOST=db', 'psql', '-At'], 'psql'],
    [['env', '-S', 'A=1 redis-cli ping'], 'redis-cli'],
    [['sh', '-c', 'curl -s "$URL" | jq .items > out.json'], 'curl'],
    [['bash', '-lc', 'cd /tmp && PGPASSWORD=x pg_dump mydb > dump.sql'], 'pg_dump'],
    [['sh', '-c', 'echo $(aws s3 ls s3://bucket)'], 'aws'],
    [['git', 'clone', 'https://github.com/acme/repo'], 'git'],
    [['perl', 'fetch.pl', '--url=http://10.0.0.5/report'], 'perl'],
    [['deno', 'run', '-A', 'tool.ts'], 'deno'],
    [['bun', 'tool.ts'], 'bun'],
  ])('names %j as %s', (argv, name) => {
    expect(unwatchedProgram(argv, where)).toBe(name);
  });

  it.each([
    [['node', 'tool.js', 'https://api.example.com']],
    [['/usr/local/bin/node20', '-e', 'fetch("http://x")']],
    [['python3', 'fetch.py', 'https://api.example.com']],
    [['env', 'A=1', 'python3', '-c', 'import urllib.request']],
    [['sh', '-c', 'ls -la && grep -r TODO src | wc -l']],
    [['git', 'status', '--short']],
    [['jq', '.items', 'out.json']],
    [['sh', 'build.sh']],
    [['sed', '-i', 's/a/b/', 'notes.txt']],
  ])('leaves %j alone: Node and Python are seen, local tools reach no service', (argv) => {
    expect(unwatchedProgram(argv, where)).toBeUndefined();
  });

  it("follows a script's shebang to the program it runs", () => {
    const viaEnv = script('fetch-tool', '#!/usr/bin/env -S curl -K\n');
    const nodeTool = script('node-tool', '#!/usr/bin/env node\nfetch("https://api.example.com")\n');
    const shellTool = script('shell-tool.sh', '#!/bin/sh\ncurl https://api.example.com\n');
    expect(unwatchedProgram([viaEnv], where)).toBe('curl');
    expect(unwatchedProgram(['fetch-tool'], where)).toBe('curl');
    expect(unwatchedProgram([nodeTool, 'https://api.example.com'], where)).toBeUndefined();
    // A shell running a script file: what the script runs is not on the command line.
    expect(unwatchedProgram([shellTool], where)).toBeUndefined();
    expect(unwatchedProgram([shellTool, 'https://api.example.com'], where)).toBe('sh');
  });

  it('stops at a bounded depth on a command line that names itself', () => {
    const loop = script('loop', `#!${path.join(dir, 'loop')}\n`);
    expect(unwatchedProgram([loop], where)).toBeUndefined();
    expect([...commandRuns(['env', 'env', 'env', 'env', 'env', 'env', 'curl', 'x://y'])]).toEqual([]);
  });
});

describe('commandRuns', () => {
  it('gives every simple command of a shell string, env and shebang followed', () => {
    const runs = [...commandRuns(['sh', '-c', 'A=1 python3 -S a.py; env B=2 curl -s u && exec psql'], where)];
    expect(runs).toEqual([
      { program: 'python3', args: ['-S', 'a.py'] },
      { program: 'curl', args: ['-s', 'u'] },
      { program: 'psql', args: [] },
    ]);
  });

  it("is what the Python hook's check reads: Python runs found as before", () => {
    const agent = script('agent.py', '#!/usr/bin/python3 -S\nprint(1)\n');
    expect(unhookedPython([agent], where)).toEqual({ program: '/usr/bin/python3', flag: '-S' });
    expect(unhookedPython(['sh', '-c', 'curl x; python3 -I t.py'], where)).toEqual({ program: 'python3', flag: '-I' });
    expect(unhookedPython(['curl', 'https://x'], where)).toBeUndefined();
  });
});
