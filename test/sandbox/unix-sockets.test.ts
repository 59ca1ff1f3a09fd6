// Unix sockets of the agent's own tree in the OS sandbox, whose seccomp filter refuses socket(AF_UNIX):
// a Node agent that serves one and a child that talks to it, a connection to a socket nobody serves,
// and TypeScript agents run by the tsx CLI (its IPC pipe between the CLI and its child) or with
// `node --import tsx` (its loader looks for a CLI's pipe that is not there), or by npx (npm writes
// its debug log in the user's home). Each is recorded, with
// and without --isolate, and replayed in the OS sandbox: the same output, no divergence, and no
// request reaching the real API (its hit counter the sentinel).
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
// @ts-expect-error: a preload module without types of its own
import { MARK } from '../../sandbox/preload/shared-unix-sockets.mjs';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { root } from '../cli/run-cli.js';
import { startServer, type TestServer } from '../record/helpers.js';
import { realDir } from './helpers.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const TSX_CLI = path.join(root, 'node_modules/tsx/dist/cli.mjs');
const UNIX_AGENT = [process.execPath, path.join(FIXTURES, 'unix-socket-agent.mjs')];
const TSX_AGENT = path.join(FIXTURES, 'tsx-agent.mts');
const NPX = path.join(path.dirname(process.execPath), 'npx');

describe.runIf(detectIsolation().level === 'bwrap')('Unix sockets of the agent tree in the OS sandbox', () => {
  let api: TestServer;
  let dir: { dir: string; remove(): Promise<void> };
  let hits = 0;

  beforeAll(async () => {
    dir = await realDir('unix-sockets-');
    api = await startServer((req, _body, res) => {
      hits++;
      res.end(`answer to ${req.url}`);
    });
  });
  afterAll(async () => {
    await api?.close();
    await dir?.remove();
  });

  it.each([
    { name: 'a served socket and a child', command: UNIX_AGENT, isolate: false },
    { name: 'a served socket and a child, --isolate', command: UNIX_AGENT, isolate: true },
    { name: 'the tsx CLI, --isolate', command: [process.execPath, TSX_CLI, TSX_AGENT], isolate: true },
    { name: 'the tsx CLI', command: [process.execPath, TSX_CLI, TSX_AGENT], isolate: false },
    { name: 'node --import tsx', command: [process.execPath, '--import', 'tsx', TSX_AGENT], isolate: false },
    // npm writes a debug log in the user's home for every run: private in the sandbox, not refused.
    ...(existsSync(NPX) ? [{ name: 'npx tsx', command: [NPX, 'tsx', TSX_AGENT], isolate: false }] : []),
  ])('$name: recorded, then replayed with the same output and no divergence', async ({ name, command, isolate }) => {
    const out = path.join(dir.dir, name.replace(/\W+/g, '-'));
    let recorded = '';
    const result = await recordCommand({
      command,
      cwd: root,
      env: { TOOL_API_URL: api.url },
      out,
      stdio: 'pipe',
      isolate,
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (recorded += d.toString())),
    });
    expect(result.exitCode, recorded).toBe(0);
    const line = JSON.parse(recorded.trim()) as Record<string, string>;
    if (command === UNIX_AGENT) {
      expect(line).toEqual({
        listened: 'listening at its path',
        heard: 'pong to "ping from the child"',
        missing: 'ENOENT',
        api: 'answer to /after',
      });
    } else {
      expect(line).toEqual({ agent: 'tsx', body: 'answer to /tsx' });
    }
    const before = hits;

    const again = await replay({
      recording: out,
      mode: 'exact',
      out: `${out}-replay`,
      stdio: 'pipe',
      env: { TOOL_API_URL: api.url },
    });
    expect(again.isolation?.level).toBe('bwrap');
    expect(again.divergences, again.output?.stderr).toEqual([]);
    expect(again.exitCode, again.output?.stderr).toBe(0);
    expect(again.output?.stdout).toBe(recorded);
    expect(hits).toBe(before);
  });

  it.each(['bwrap', 'none'] as const)(
    'a file at a socket path naming a real server leads nowhere real (isolation %s)',
    async (isolation) => {
      const out = path.join(dir.dir, 'a-served-socket-and-a-child');
      const marker = path.join(dir.dir, `planted-${isolation}.sock`);
      writeFileSync(marker, `${MARK}${new URL(api.url).port}\n`);
      const before = hits;
      const again = await replay({
        recording: out,
        mode: 'exact',
        out: `${out}-marker-${isolation}`,
        stdio: 'pipe',
        env: { TOOL_API_URL: api.url, MARKER_PATH: marker },
        isolation,
        command: [process.execPath, path.join(FIXTURES, 'unix-marker-agent.mjs')],
      });
      // In the OS sandbox the port is its own loopback's, where nothing listens; without it the
      // guard does not follow the file, and refuses the socket.
      expect(JSON.parse(again.output?.stdout.trim() ?? '{}'), again.output?.stderr).toEqual({ got: 'ECONNREFUSED' });
      expect(hits).toBe(before);
    },
  );
});
