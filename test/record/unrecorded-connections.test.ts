// What the recorder cannot record is said, not left out (src/record/preload/record-sockets.mjs):
// an HTTP upgrade but a WebSocket's (which is recorded: test/record/websocket.test.ts), raw TCP,
// HTTP/2, a Unix socket, a Postgres server the run was not given. Each is named in the manifest (`unrecorded`) with the package
// that opened it and how many there were, `record` warns, and plain HTTP (fetch, node:http with
// keep-alive) and the database given with --db are not named. A replay refuses them and says so:
// an upgrade is a blocked connection named as one, never a "clean" replay with a made-up answer.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { classifyFirstWrite } from '../../src/record/preload/record-sockets.mjs';
import { readRecording, type UnrecordedConnection, unrecordedWarning } from '../../src/recording/index.js';
import { FIXTURES, replayExact, tempDir } from './helpers.js';

const AGENT = path.join(FIXTURES, 'connections-agent.mjs');
const PG = process.env.TAPEDECK_PG_URL;
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

interface Servers {
  env: Record<string, string>;
  ports: { http: number; ws: number; tcp: number; h2: number };
  unix: string;
  close(): Promise<void>;
}

const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;
const listening = (server: net.Server, where: number | string) =>
  new Promise<void>((resolve) =>
    typeof where === 'string' ? server.listen(where, resolve) : server.listen(where, '127.0.0.1', resolve),
  );

async function startServers(dir: string): Promise<Servers> {
  const web = http.createServer((req, res) => res.end(`http ${req.url}`));
  // An upgrade of the server's own protocol: 101, then the connection is the protocol's.
  web.on('upgrade', (_req, socket) => {
    socket.end('HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: chat-v1\r\n\r\n');
  });
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  wss.on('connection', (socket) => socket.on('message', (m) => socket.send(`echo ${String(m)}`)));
  const echo = (socket: net.Socket) => socket.on('data', (d) => socket.end(`pong ${String(d)}`));
  const tcp = net.createServer(echo);
  const unix = net.createServer(echo);
  const h2 = http2.createServer((_req, res) => res.end('h2 answer'));
  const unixPath = path.join(dir, 'agent.sock');
  await Promise.all([
    listening(web, 0),
    listening(tcp, 0),
    listening(h2, 0),
    listening(unix, unixPath),
    new Promise((resolve) => wss.on('listening', resolve)),
  ]);
  const ports = {
    http: portOf(web),
    ws: (wss.address() as net.AddressInfo).port,
    tcp: portOf(tcp),
    h2: portOf(h2),
  };
  return {
    ports,
    unix: unixPath,
    env: {
      HTTP_URL: `http://127.0.0.1:${ports.http}`,
      WS_URL: `ws://127.0.0.1:${ports.ws}/live`,
      TCP_PORT: String(ports.tcp),
      H2_URL: `http://127.0.0.1:${ports.h2}`,
      UNIX_PATH: unixPath,
      ...(PG ? { DATABASE_URL: PG } : {}),
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      web.closeAllConnections();
      await Promise.all(
        [web, tcp, unix, h2]
          .map((s) => new Promise((resolve) => s.close(resolve)))
          .concat(new Promise((resolve) => wss.close(resolve))),
      );
    },
  };
}

async function record(
  out: string,
  args: string[],
  env: Record<string, string>,
  flags: { fsRoot?: string; dbUrl?: string } = {},
) {
  const { recordCommand } = await import('../../src/record/index.js');
  let stdout = '';
  const result = await recordCommand({
    command: [process.execPath, AGENT, ...args],
    env,
    out,
    stdio: 'pipe',
    ...flags,
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
  });
  const manifest = (await readRecording(out)).manifest;
  return { result, manifest, answers: JSON.parse(stdout) as Record<string, unknown> };
}

const sorted = (list: readonly UnrecordedConnection[] | undefined) =>
  [...(list ?? [])].sort((a, b) => a.kind.localeCompare(b.kind) || a.target.localeCompare(b.target));

describe('connections the recorder cannot record', () => {
  const tmp = tempDir('tapedeck-unrecorded-');
  let servers: Servers;
  beforeAll(async () => {
    servers = await startServers(tmp.dir);
  });
  afterAll(async () => {
    await servers.close();
    tmp.remove();
  });

  it('are named in the manifest and warned of; HTTP and the given database are not', { timeout: 120_000 }, async () => {
    const kinds = ['http', 'ws', 'upgrade', 'tcp', 'http2', 'unix', ...(PG ? ['pg'] : [])];
    const out = path.join(tmp.dir, 'all');
    const { result, manifest, answers } = await record(out, kinds, servers.env);
    expect(result.exitCode).toBe(0);
    // The agent got its real answers: watching changes nothing of what it sees.
    expect(answers).toMatchObject({
      http: ['http /a', 'http /b', 'http /b'],
      ws: 'echo hello',
      upgrade: 101,
      tcp: ['pong ping 1', 'pong ping 2'],
      http2: 'h2 answer',
      unix: 'pong ping unix',
      ...(PG ? { pg: 1 } : {}),
    });
    const { ports } = servers;
    // node:http2 is recorded (test/replay/http2.test.ts): its connection is a step, not named.
    const expected: UnrecordedConnection[] = [
      { kind: 'tcp', target: `127.0.0.1:${ports.tcp}`, connections: 2 },
      { kind: 'unix', target: servers.unix, connections: 1 },
      { kind: 'upgrade', protocol: 'chat-v1', target: `http://127.0.0.1:${ports.http}/chat`, connections: 1 },
    ];
    if (PG) {
      const u = new URL(PG);
      expected.unshift({ kind: 'postgres', target: `${u.hostname}:${u.port || 5432}`, by: 'pg', connections: 1 });
    }
    expect(sorted(manifest.unrecorded)).toEqual(sorted(expected));
    expect(sorted(result.unrecorded)).toEqual(sorted(expected));
    // The HTTP calls are steps (the HTTP/2 request too), and the WebSocket's turns (its open, the
    // agent's message, its close: test/record/websocket.test.ts); another upgrade's 101 is not an exchange.
    expect(result.steps).toBe(7);
    expect(unrecordedWarning(expected.find((c) => c.protocol === 'chat-v1') as UnrecordedConnection)).toBe(
      `not recorded: an HTTP upgrade to chat-v1 at http://127.0.0.1:${ports.http}/chat: tapedeck records HTTP, not what goes over an upgraded connection; a replay refuses it`,
    );
  });

  it.runIf(PG)(
    'a Postgres connection to the database given with --db is recorded, not named',
    { timeout: 120_000 },
    async () => {
      const out = path.join(tmp.dir, 'db');
      const { manifest, answers } = await record(out, ['pg', 'tcp'], servers.env, { dbUrl: PG as string });
      expect(answers.pg).toBe(1);
      expect(manifest.unrecorded?.map((c) => c.kind)).toEqual(['tcp']);
    },
  );

  it('with world capture (the interceptors) another upgrade is named too and leaves no step', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(tmp.dir, 'fs');
    const root = path.join(tmp.dir, 'root');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(root, { recursive: true });
    const { result, manifest, answers } = await record(out, ['http', 'upgrade', 'ws'], servers.env, { fsRoot: root });
    expect(answers.ws).toBe('echo hello');
    expect(answers.upgrade).toBe(101);
    expect(manifest.unrecorded?.map((c) => [c.kind, c.protocol, c.target])).toEqual([
      ['upgrade', 'chat-v1', `http://127.0.0.1:${servers.ports.http}/chat`],
    ]);
    // The HTTP calls and the WebSocket's three turns.
    expect(result.steps).toBe(6);
    const recording = await readRecording(out);
    expect(recording.events.some((e) => e.type === 'http.exchange' && e.payload.response?.status === 101)).toBe(false);
  });

  it('a replay refuses another upgrade and says what it is; a WebSocket is answered from the recording', {
    timeout: 180_000,
  }, async () => {
    const out = path.join(tmp.dir, 'ws');
    const { answers } = await record(out, ['http', 'upgrade', 'ws'], servers.env);
    expect(answers.ws).toBe('echo hello');
    for (const isolation of LEVELS) {
      const replayed = await replayExact(out, path.join(tmp.dir, `ws-replay-${isolation}`), isolation, servers.env);
      const got = JSON.parse(replayed.output?.stdout ?? '{}') as Record<string, unknown>;
      // The HTTP calls and the WebSocket come from the recording; the other upgrade gets a
      // refusal, not a made-up answer.
      expect(got.http).toEqual(answers.http);
      expect(got.ws).toBe('echo hello');
      expect(String(got.upgrade)).toMatch(/^error /);
      expect(replayed.divergences.map((d) => [d.kind, d.message])).toEqual([
        [
          'blocked-connection',
          `The agent opened an HTTP upgrade to chat-v1 at http://127.0.0.1:${servers.ports.http}/chat; tapedeck records and replays HTTP and WebSocket conversations, not what goes over another upgraded connection, so it was refused.`,
        ],
      ]);
    }
  });

  it('in-process, each run names its own; the pg client under observed capture is recorded, not named', {
    timeout: 60_000,
  }, async () => {
    const { record } = await import('../../src/record/index.js');
    const pgMod = PG ? (await import('pg')).default : undefined;
    const ping = (line: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(servers.ports.tcp, '127.0.0.1', () => socket.write(line));
        let got = '';
        socket.on('data', (d) => (got += d));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });
    const [raw, quiet] = await Promise.all([
      record({ out: path.join(tmp.dir, 'raw') }, async () => {
        const answer = await ping('in a run');
        if (pgMod && PG) {
          const client = new pgMod.Client({ connectionString: PG });
          await client.connect();
          await client.query('select 1');
          await client.end();
        }
        return answer;
      }),
      record({ out: path.join(tmp.dir, 'quiet') }, async () => 'nothing opened'),
    ]);
    // Outside any run: not watched, not named anywhere.
    expect(await ping('outside')).toBe('pong outside');
    expect(raw.result).toBe('pong in a run');
    const manifest = (await readRecording(raw.dir)).manifest;
    expect(manifest.unrecorded).toEqual([{ kind: 'tcp', target: `127.0.0.1:${servers.ports.tcp}`, connections: 1 }]);
    expect((await readRecording(quiet.dir)).manifest.unrecorded).toBeUndefined();
  });
});

describe('what a connection carries, from its first write', () => {
  const int32 = (n: number) => String.fromCharCode((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
  it.each([
    ['an HTTP/1.1 request', 'POST /v1/chat HTTP/1.1\r\nhost: api\r\n\r\n', false, undefined],
    [
      'a WebSocket over TLS',
      'GET /rt HTTP/1.1\r\nHost: api.x:443\r\nUpgrade: websocket\r\n\r\n',
      true,
      { kind: 'upgrade', protocol: 'websocket', target: 'wss://api.x:443/rt' },
    ],
    [
      'an h2c upgrade',
      'GET / HTTP/1.1\r\nupgrade: h2c\r\n\r\n',
      false,
      { kind: 'upgrade', protocol: 'h2c', target: 'http://h:1/' },
    ],
    ['HTTP/2 with prior knowledge', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', false, { kind: 'http2', target: 'h:1' }],
    ['a Postgres startup', `${int32(40)}${int32(196608)}user\0me\0`, false, { kind: 'postgres', target: 'h:1' }],
    ['a Postgres SSL request', `${int32(8)}${int32(80877103)}`, false, { kind: 'postgres', target: 'h:1' }],
    ['Redis', '*1\r\n$4\r\nPING\r\n', false, { kind: 'tcp', target: 'h:1' }],
    ['SMTP over TLS', 'EHLO me\r\n', true, { kind: 'tls', target: 'h:1' }],
  ])('%s', (_name, head, encrypted, expected) => {
    expect(classifyFirstWrite(head, encrypted, 'h:1')).toEqual(expected);
  });
});
