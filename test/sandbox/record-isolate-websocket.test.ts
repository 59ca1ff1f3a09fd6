// record --isolate and WebSockets: the agent's tree runs in the OS sandbox with no network but
// tapedeck's doors, so its WebSocket goes through the recording proxy — a Node client's (ws,
// undici) sent there by the preload, a client that is not Node (Python) through HTTP_PROXY — and
// the proxy records the conversation as the preload would (the same websocket.exchange turns), so
// the replay answers it. The real server keeps a count of the connections it accepted (the
// sentinel): a recording reaches it once; a replay in the OS sandbox never, also for a WebSocket
// the recording does not have. Over TLS with a certificate for a host name, the name goes to the
// server (SNI), recorded with and without the sandbox.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { readRecording } from '../../src/recording/index.js';
import { tempDir } from '../record/helpers.js';
import {
  allText,
  CONVERSATION,
  recordConversation,
  startWsServer,
  TOKEN,
  type WsServer,
} from '../record/websocket-helpers.js';

const PYTHON_CLIENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../replay/fixtures/websocket-client.py');
const BWRAP = detectIsolation().level === 'bwrap';

const turnsOf = async (dir: string) =>
  (await readRecording(dir)).events.flatMap((e) => (e.type === 'websocket.exchange' ? [e.payload] : []));

async function replayInSandbox(
  recording: string,
  out: string,
  options: { command?: string[]; env?: Record<string, string> } = {},
) {
  const { replay } = await import('../../src/replay/index.js');
  const result = await replay({
    recording,
    mode: 'exact',
    out,
    stdio: 'pipe',
    isolation: 'bwrap',
    env: options.env ?? {},
    ...(options.command ? { command: options.command } : {}),
    timeoutMs: 120_000,
  });
  return { result, got: JSON.parse(result.output?.stdout || 'null') as string[] | null };
}

const FULL = ['open', 'message', 'message', 'message', 'message', 'close'];

/** A SHORT conversation (the welcome, "hello", the close) made once with the real server and recorded turn by turn. */
async function expectShortConversation(
  dir: string,
  server: WsServer,
  exitCode: number | null,
  got: unknown,
  before: number,
) {
  expect(exitCode).toBe(0);
  expect(got).toEqual(['welcome', 'echo hello', 'closed 1000']);
  expect(server.seen.length).toBe(before + 1);
  expect((await turnsOf(dir)).map((t) => [t.kind, t.url])).toEqual([
    ['open', server.url],
    ['message', server.url],
    ['close', server.url],
  ]);
}

describe.runIf(BWRAP)('record --isolate: a WebSocket conversation is recorded through the proxy', () => {
  const tmp = tempDir('tapedeck-isolate-ws-');
  let server: WsServer;
  beforeAll(async () => {
    server = await startWsServer();
  });
  afterAll(async () => {
    await server?.close();
    tmp.remove();
  });

  for (const client of ['ws', 'undici'] as const)
    it(`a Node agent's (${client}) is made once for real, recorded, and replayed without reaching the server`, {
      timeout: 180_000,
    }, async () => {
      const dir = path.join(tmp.dir, `recorded-${client}`);
      const before = server.seen.length;
      const { result, got } = await recordConversation(dir, server.url, { CLIENT: client }, undefined, {
        isolate: true,
      });
      expect(result.exitCode).toBe(0);
      expect(got?.map((g, i) => (i === 2 ? g.slice(0, 9) : g))).toEqual(CONVERSATION);
      expect(server.seen.slice(before)).toEqual([`Bearer ${TOKEN}`]);
      // The same turns the preload records, and nothing named as passing unrecorded.
      const turns = await turnsOf(dir);
      expect(turns.map((t) => t.kind)).toEqual(FULL);
      expect(turns[0]?.response?.status).toBe(101);
      expect(turns[1]?.sent?.body?.text).toBe('hello');
      expect(turns[1]?.received.map((m) => m.body?.text)).toEqual(['echo hello']);
      expect(result.unrecorded).toBeUndefined();
      expect(result.sideChannels).toBeUndefined();
      expect(allText(dir)).not.toContain(TOKEN);

      // Replayed in the OS sandbox with the server still running: answered from the recording.
      const { result: replayed, got: again } = await replayInSandbox(dir, path.join(tmp.dir, `replay-${client}`));
      expect(replayed.divergences).toEqual([]);
      expect(again).toEqual(got);
      expect(replayed.served.recording).toBe(6);
      expect(server.seen.length).toBe(before + 1);
    });

  it('a client that is not Node (Python through HTTP_PROXY) is recorded, and a WebSocket the recording lacks reaches nothing', {
    timeout: 180_000,
  }, async () => {
    const dir = path.join(tmp.dir, 'recorded-python');
    const before = server.seen.length;
    const command = ['python3', PYTHON_CLIENT];
    const { result, got } = await recordConversation(dir, server.url, { VIA_PROXY: '1' }, undefined, {
      isolate: true,
      command,
    });
    await expectShortConversation(dir, server, result.exitCode, got, before);
    expect(result.unrecorded).toBeUndefined();

    const { result: replayed, got: again } = await replayInSandbox(dir, path.join(tmp.dir, 'replay-python'), {
      command,
      env: { VIA_PROXY: '1' },
    });
    expect(replayed.divergences).toEqual([]);
    expect(again).toEqual(got);
    expect(replayed.served.recording).toBe(3);
    // A WebSocket at a path the recording does not have: refused and named, the server not reached.
    const other = new URL(server.url);
    other.pathname = '/elsewhere';
    const { result: refused } = await replayInSandbox(dir, path.join(tmp.dir, 'replay-python-other'), {
      command,
      env: { VIA_PROXY: '1', WS_URL: other.href },
    });
    expect(refused.divergences.map((d) => d.message).join('\n')).toContain(other.href);
    expect(server.seen.length).toBe(before + 1);
  });
});

describe.runIf(BWRAP)('record --isolate: a server the agent starts inside the sandbox', () => {
  const tmp = tempDir('tapedeck-isolate-inside-');
  afterAll(() => tmp.remove());

  it('is reached as is, not through the proxy', { timeout: 120_000 }, async () => {
    const { recordCommand } = await import('../../src/record/index.js');
    // A TCP echo server on a loopback port inside, and a raw connection to it.
    const script = `import net from 'node:net';
const server = net.createServer((s) => s.pipe(s)).listen(0, '127.0.0.1', () => {
  const c = net.connect(server.address().port, '127.0.0.1', () => c.write('ping'));
  c.on('data', (d) => { console.log(String(d)); c.end(); server.close(); });
  c.on('error', (e) => { console.log('error ' + e.code); server.close(); });
});`;
    let stdout = '';
    const result = await recordCommand({
      command: [process.execPath, '--input-type=module', '-e', script],
      out: path.join(tmp.dir, 'recorded'),
      stdio: 'pipe',
      isolate: true,
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
    });
    expect(result.exitCode).toBe(0);
    expect(stdout.trim()).toBe('ping');
  });
});

describe('wss:// to a server known by a host name (SNI)', () => {
  const tmp = tempDir('tapedeck-ws-sni-');
  let server: WsServer;
  beforeAll(async () => {
    server = await startWsServer({ tls: { dir: tmp.dir, host: 'localhost' } });
  });
  afterAll(async () => {
    await server?.close();
    tmp.remove();
  });

  for (const isolate of BWRAP ? [false, true] : [false])
    it(`is recorded ${isolate ? 'through the proxy (--isolate)' : 'by the preload'} and replayed in the OS sandbox`, {
      timeout: 180_000,
    }, async () => {
      expect(server.url).toMatch(/^wss:\/\/localhost:\d+\//);
      const dir = path.join(tmp.dir, `recorded-${isolate}`);
      const before = server.seen.length;
      // The agent trusts the server's CA (without the sandbox it would): so does the proxy's way out.
      const env = { NODE_EXTRA_CA_CERTS: server.caFile as string, SHORT: '1' };
      const { result, got } = await recordConversation(dir, server.url, env, undefined, { isolate });
      await expectShortConversation(dir, server, result.exitCode, got, before);
      if (!BWRAP) return;
      const { result: replayed, got: again } = await replayInSandbox(dir, path.join(tmp.dir, `replay-${isolate}`));
      expect(replayed.divergences).toEqual([]);
      expect(again).toEqual(got);
      expect(server.seen.length).toBe(before + 1);
    });
});
