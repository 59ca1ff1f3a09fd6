// Sentinels that see the real world: a TCP server counting hits, a Unix socket server counting
// hits, a file outside any workspace, a live process; and a runner for shell scripts in the OS sandbox.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The ways out that get a TCP sentinel of their own, so the report can be checked for each. */
export const TCP_VECTORS = [
  'curl',
  'wget',
  'python',
  'child',
  'fork',
  'worker',
  'http2',
  'websocket',
  'tcpwrap',
] as const;

export interface Sentinels {
  /** TCP on 127.0.0.1 (IPv4) and ::1 (IPv6): every connection counts. */
  port: number;
  /** One more TCP sentinel on 127.0.0.1 per vector. */
  ports: Record<(typeof TCP_VECTORS)[number], number>;
  port6: number;
  /** UDP on 127.0.0.1: every datagram counts (DNS queries to it too). */
  udpPort: number;
  /** A Unix socket in a folder on the real disk that is not /tmp. */
  socketPath: string;
  /** A file on the real disk outside any workspace, and its content. */
  file: string;
  fileContent: string;
  /** A live process that must never be signalled (its pid). */
  pid: number;
  signalled(): boolean;
  hits(): number;
  close(): Promise<void>;
}

export async function startSentinels(dir: string): Promise<Sentinels> {
  let hits = 0;
  const count = (socket: net.Socket) => {
    hits++;
    socket.on('error', () => {});
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nsentinel');
  };
  const tcp = net.createServer(count);
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  const servers: net.Server[] = [tcp];
  const ports = {} as Sentinels['ports'];
  for (const name of TCP_VECTORS) {
    const server = net.createServer(count);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    ports[name] = (server.address() as net.AddressInfo).port;
  }
  const tcp6 = net.createServer(count);
  await new Promise<void>((r) => tcp6.listen(0, '::1', r));
  const dgram = await import('node:dgram');
  const udp = dgram.createSocket('udp4');
  udp.on('message', () => {
    hits++;
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  const socketPath = path.join(dir, 'sentinel.sock');
  const unix = net.createServer(count);
  await new Promise<void>((r) => unix.listen(socketPath, r));
  const file = path.join(dir, 'real-file.txt');
  const fileContent = `real ${Date.now()}\n`;
  await writeFile(file, fileContent, { mode: 0o644 });
  // A live process: a shell that records any signal it gets.
  const marker = path.join(dir, 'signalled');
  const live: ChildProcess = spawn(
    'sh',
    ['-c', `trap 'echo x > ${marker}; exit 0' TERM INT HUP USR1; while :; do sleep 1; done`],
    {
      stdio: 'ignore',
      detached: true,
    },
  );
  await new Promise((r) => setTimeout(r, 100));
  const { existsSync } = await import('node:fs');
  return {
    port: (tcp.address() as net.AddressInfo).port,
    ports,
    port6: (tcp6.address() as net.AddressInfo).port,
    udpPort: udp.address().port,
    socketPath,
    file,
    fileContent,
    pid: live.pid as number,
    signalled: () => existsSync(marker) || live.exitCode !== null || live.signalCode !== null,
    hits: () => hits,
    async close() {
      live.kill('SIGKILL');
      for (const s of [...servers, tcp6, unix]) await new Promise((r) => s.close(r));
      udp.close();
    },
  };
}

/** A real HTTP server with a hit counter (the "real API"). */
export async function startCountingApi(): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"real":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hits: () => hits,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A folder on the real disk outside /tmp (which the sandbox hides), removed by the returned function. */
export async function realDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const base = path.join(process.cwd(), '.tapedeck', 'test-sentinels');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(base, { recursive: true });
  const dir = await mkdtemp(path.join(base, prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export const tmpBase = tmpdir();

/** A real Postgres database on the server the sandbox database lives on, with refunds tables (public and app) to count. */
export async function startDbSentinel(
  adminUrl: string,
): Promise<{ url: string; rows(): Promise<number>; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const { randomBytes } = await import('node:crypto');
  const name = `tapedeck_escape_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = new pg.Client({ connectionString: url.href });
  await db.connect();
  await db.query('CREATE TABLE refunds (id serial primary key, amount int)');
  // The same table in schema app (where a replay's sandbox database, owned by its own role, has it).
  await db.query('CREATE SCHEMA app; CREATE TABLE app.refunds (id int primary key, amount int)');
  const count = 'SELECT (SELECT count(*) FROM refunds) + (SELECT count(*) FROM app.refunds) AS n';
  return {
    url: url.href,
    rows: async () => Number((await db.query(count)).rows[0].n),
    async drop() {
      await db.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * Runs `code` in a fresh process (tsx) after importing sandbox/os/detect.ts as `detect`, with
 * `env` over this one's; returns its stdout (its stderr must be empty).
 */
export function inDetectProcess(code: string, env: NodeJS.ProcessEnv): { stdout: string; stderr: string } {
  const detect = pathToFileURL(path.resolve('sandbox/os/detect.ts')).href;
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `const detect = await import(${JSON.stringify(detect)}); ${code}`],
    { encoding: 'utf8', env: { ...process.env, ...env } },
  );
  return { stdout: run.stdout, stderr: run.stderr };
}

/** Whether `program` is on this machine's PATH. */
export const hasProgram = (program: string): boolean => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;

/**
 * This machine's own name, resolved outside as an internal service's name would be (not
 * localhost), and what a test of a service at that name inside the OS sandbox lacks here: the
 * sandbox, a name that resolves (`address`), the `programs` it runs.
 */
export async function ownNameService(
  programs: readonly string[],
  level: string,
): Promise<{ name: string; address: string | undefined; missing: string[] }> {
  const name = hostname().toLowerCase();
  const resolved = await lookup(name, { family: 4 }).then(
    (a) => a.address,
    () => undefined,
  );
  return {
    name,
    address: resolved,
    missing: [
      ...(level === 'bwrap' ? [] : ['bubblewrap']),
      ...(resolved && name !== 'localhost' ? [] : ['a host name that resolves']),
      ...programs.filter((p) => !hasProgram(p)),
    ],
  };
}
