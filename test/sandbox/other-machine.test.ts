import net from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { hasProgram as has, realDir, startDbSentinel } from './helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'other-machine-agent.mjs');
const PG_URL = process.env.TAPEDECK_PG_URL;

/** This machine's first IPv4 address that is not loopback: "another machine" as the agent sees it. */
const OTHER = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
const missing = [
  ...(OTHER ? [] : ['a non-loopback IPv4 address']),
  ...(PG_URL ? [] : ['TAPEDECK_PG_URL']),
  ...(detectIsolation().level === 'bwrap' ? [] : ['bubblewrap']),
  ...['curl', 'psql', 'nsenter', 'unshare', 'ip'].filter((p) => !has(p)),
];
if (missing.length > 0) console.warn(`other-machine.test.ts skipped: no ${missing.join(', ')}`);

/** A TCP server on `host` that counts connections and hands each to `serve`. */
async function listenOn(host: string, serve: (socket: net.Socket) => void) {
  let hits = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    hits++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    serve(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

type Result = { api: string; row: string; count: string; unrecorded: string };

/** Records the agent; what it printed. */
async function record(options: Omit<Parameters<typeof recordCommand>[0], 'command' | 'stdio' | 'onSpawn'>) {
  let stdout = '';
  const result = await recordCommand({
    ...options,
    command: [process.execPath, AGENT],
    stdio: 'pipe',
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString('utf8'))),
  });
  expect(result.exitCode).toBe(0);
  return { result, out: printed(stdout) };
}
const printed = (stdout: string | undefined): Result => JSON.parse((stdout ?? '').trim().split('\n').pop() ?? '{}');

describe.runIf(missing.length === 0)('a database and a service at another machine’s address', () => {
  const host = OTHER as string;
  let dir: { dir: string; remove(): Promise<void> };
  let db: Awaited<ReturnType<typeof startDbSentinel>>;
  let forwarder: Awaited<ReturnType<typeof listenOn>>;
  let service: Awaited<ReturnType<typeof listenOn>>;
  let unrecorded: Awaited<ReturnType<typeof listenOn>>;
  let env: Record<string, string>;
  let dbUrl: string;

  beforeAll(async () => {
    dir = await realDir('other-machine-');
    db = await startDbSentinel(PG_URL as string);
    const real = new URL(db.url);
    // The real Postgres listens on loopback: at the other address, a forwarder stands for it.
    forwarder = await listenOn(host, (inside) => {
      const outside = net.connect(Number(real.port || 5432), real.hostname);
      inside.pipe(outside).pipe(inside);
      outside.on('error', () => inside.destroy());
      inside.on('close', () => outside.destroy());
    });
    service = await listenOn(host, (socket) =>
      socket.once('data', () =>
        socket.end(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 25\r\n\r\n{"order":7,"by":"real 1"}',
        ),
      ),
    );
    unrecorded = await listenOn(host, (socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno'));
    const production = new URL(db.url);
    production.hostname = host;
    production.port = String(forwarder.port);
    dbUrl = production.href;
    env = {
      OTHER_HOST: host,
      DATABASE_URL: dbUrl,
      SERVICE_URL: `http://${host}:${service.port}`,
      UNRECORDED_PORT: String(unrecorded.port),
      // The same database by its parts, as an agent's config may hold them (a replay gives the
      // agent the sandbox's URL in DATABASE_URL; these it leaves as they are).
      OTHER_DB_PORT: String(forwarder.port),
      OTHER_DB_NAME: production.pathname.slice(1),
      OTHER_DB_USER: production.username,
    };
  });
  afterAll(async () => {
    await forwarder?.close();
    await service?.close();
    await unrecorded?.close();
    await db?.drop().catch(() => undefined);
    await dir?.remove();
  });

  /** Replays `recording` in the OS sandbox and checks that nothing real was reached. */
  const replayed = async (recording: string, name: string) => {
    const before = {
      rows: await db.rows(),
      service: service.hits(),
      unrecorded: unrecorded.hits(),
      db: forwarder.hits(),
    };
    const result = await replay({ recording, mode: 'exact', out: path.join(dir.dir, name), stdio: 'pipe' });
    expect(result.isolation?.level, result.output?.stderr).toBe('bwrap');
    // Nothing real: the real database's rows, and every server at the other address, untouched.
    expect(await db.rows()).toBe(before.rows);
    expect({ service: service.hits(), unrecorded: unrecorded.hits(), db: forwarder.hits() }).toEqual({
      service: before.service,
      unrecorded: before.unrecorded,
      db: before.db,
    });
    return { result, out: printed(result.output?.stdout) };
  };

  it('recorded with --isolate: psql and curl at the address are recorded, and replay in the sandbox', async () => {
    const out = path.join(dir.dir, 'isolated');
    const rows = await db.rows();
    const { result: recordedRun, out: run } = await record({ env, out, isolate: true, dbUrl });
    // The recording names the way out it could not record (the unrecorded port), and nothing else.
    expect(recordedRun.sideChannels?.join('\n')).toContain(`${host}:${unrecorded.port}`);
    expect(recordedRun.sideChannels).toHaveLength(1);
    // The real run reached the real machine, from inside the recording's sandbox.
    expect(run.api).toBe('{"order":7,"by":"real 1"}');
    expect(run.row).toBe('70');
    expect(run.count).toBe(String(rows + 1));
    expect(run.unrecorded).toMatch(/^failed/);
    expect(await db.rows()).toBe(rows + 1);
    const rec = await readRecording(out);
    const urls = rec.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as { request: { url: string } }).request.url);
    expect(urls).toEqual([`http://${host}:${service.port}/orders/7`]);

    const { result, out: again } = await replayed(out, 'replay-isolated');
    // psql's insert went to the sandbox database (one more row there), curl got the recorded answer.
    expect(again, result.output?.stderr).toEqual({ ...run, unrecorded: again.unrecorded });
    expect(again.unrecorded).toMatch(/^failed/);
    expect((result.warnings ?? []).join('\n')).not.toMatch(/cannot be served/);
    // The port no one recorded is no way out, and the attempt is named (the address is the sandbox's own).
    expect(result.divergences.map((d) => d.kind)).toEqual(['side-channel']);
    expect(result.sideChannels?.map((c) => c.target)).toEqual([`${host}:${unrecorded.port}`]);
  });

  it('recorded without --isolate: the replay’s psql at the address still writes to the sandbox only', async () => {
    const out = path.join(dir.dir, 'plain');
    const rows = await db.rows();
    const { out: run } = await record({ env, out, dbUrl });
    expect(run.row).toBe('70');
    expect(run.count).toBe(String(rows + 1));
    const { result, out: again } = await replayed(out, 'replay-plain');
    expect(again.row, result.output?.stderr).toBe('70');
    expect(again.count).toBe(String(rows + 1));
    // Its curl was never recorded: nothing answers it at the address, the real service is not
    // reached, and the attempt is named with the unrecorded port's.
    expect(again.api).toMatch(/^failed/);
    expect(result.sideChannels?.map((c) => c.target).sort()).toEqual(
      [`${host}:${service.port}`, `${host}:${unrecorded.port}`].sort(),
    );
  });
});
