// The CLI loads only the command being run: `--version`, `verify` and `ledger` never import the
// database drivers, the TUI, YAML, the container runtime or the AWS codecs, and a replay of a run
// that made plain HTTP calls loads none of them either (the start-up budget of issue 22; a replay's
// fixed cost is what keeps a whole-process replay from beating the live run), nor tapedeck's own code for
// databases, services, the OS sandbox, WebSockets, state diff and token counting.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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

/**
 * tapedeck's own modules a replay of plain HTTP calls has no use for (the start-up budget of issue
 * 22: ~40% of the modules such a replay once loaded): each loads where it is used.
 */
const UNUSED_BY_PLAIN_REPLAY = [
  // The in-process replay and the recorder behind it (the replay barrel, src/replay/index.ts).
  'src/replay/in-process.ts',
  'src/record/in-process.ts',
  // State diff and the fact checks (the diff barrel); the end state is compared by compare-worlds.ts.
  'src/diff/state-diff.ts',
  'src/facts/index.ts',
  // The ledger's tokenizer (the ledger barrel); a replay prices calls with cost.ts alone.
  'src/ledger/provenance.ts',
  // Database sandboxes, PGlite's server and the snapshotter: for a recording with a database.
  'sandbox/db.ts',
  'sandbox/pglite/server.ts',
  'src/postgres/snapshot.ts',
  // Sandboxed services: at the first call to one.
  'sandbox/services.ts',
  // The OS sandbox: for a replay run in it.
  'src/replay/isolate.ts',
  'sandbox/os/sandbox.ts',
  // The WebSocket answerer: for a recording with a WebSocket conversation.
  'src/replay/websocket.ts',
];

/** What a `tapedeck …` process imported: packages (bare specifiers) and tapedeck's own modules. */
async function loadedBy(args: string[], name: string, cwd = root): Promise<{ packages: string[]; modules: string[] }> {
  const loaded = await packagesLoadedBy(args, name, cwd);
  return {
    packages: loaded.filter((l) => !l.startsWith('local:')),
    modules: loaded.flatMap((l) => (l.startsWith('local:') ? [l.slice('local:'.length)] : [])),
  };
}

/** Every line the load hook wrote for a `tapedeck …` process. */
function packagesLoadedBy(args: string[], name: string, cwd = root): Promise<string[]> {
  const log = join(tmp, `${name}.log`);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', join(root, 'test/package/loaded-modules.mjs'), bin, ...args],
      { cwd, env: { ...process.env, TAPEDECK_LOADED_LOG: log }, timeout: 60_000 },
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
    const runs = (
      await Promise.all([
        loadedBy(['--version'], 'version'),
        loadedBy(['verify', example('openai-baseline')], 'verify'),
        loadedBy(['ledger', example('openai-baseline')], 'ledger'),
      ])
    ).map((r) => r.packages);
    for (const loaded of runs) {
      const heavy = loaded.map(packageOf).filter((p) => HEAVY.includes(p));
      expect(heavy).toEqual([]);
    }
    // The hook does see packages: `verify` reads recordings through zod.
    expect(runs[1]?.map(packageOf)).toContain('zod');
  });

  it("a replay of plain HTTP calls imports no AWS signer, YAML, database driver, TUI or container runtime, nor tapedeck's own code it does not use", {
    timeout: 120_000,
  }, async () => {
    const server = createServer((_req, res) => res.end('{"ok":true}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address();
      const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
      const work = mkdtempSync(join(tmp, 'replay-'));
      writeFileSync(join(work, 'agent.mjs'), `console.log(await (await fetch(${JSON.stringify(url)})).text());\n`);
      // Asynchronously: the server answering the agent lives in this process.
      await promisify(execFile)(
        process.execPath,
        [bin, 'record', '--out', 'rec', '--', process.execPath, 'agent.mjs'],
        {
          cwd: work,
          timeout: 60_000,
        },
      );
      const loaded = await loadedBy(['replay', 'rec', '--out', 'out', '--isolation', 'none'], 'replay', work);
      expect(loaded.packages.map(packageOf).filter((p) => HEAVY.includes(p))).toEqual([]);
      expect(loaded.packages.map(packageOf)).toContain('zod');
      expect(loaded.modules.filter((m) => UNUSED_BY_PLAIN_REPLAY.includes(m))).toEqual([]);
      // The hook does see tapedeck's own modules.
      expect(loaded.modules).toContain('src/replay/replay.ts');
    } finally {
      server.close();
    }
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
