// biome-ignore-all lint/suspicious/noTemplateCurlyInString: service settings hold ${port}-style placeholders on purpose
// Sandboxed services started from a command: ready, held to the sandbox (database, files, network),
// stopped; a service that dies or is misconfigured says so; an image service without Docker fails at once.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbSandbox, openDbSandbox } from '../../sandbox/db.js';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { type PgRelay, pgTargetOf, startPgRelay } from '../../sandbox/pg-relay.js';
import { type ServiceIsolation, startService } from '../../sandbox/services.js';
import { realDir } from '../sandbox/helpers.js';
import { notesSnapshot } from './fixtures.js';

const SERVICE = fileURLToPath(new URL('./fixtures/probe-service.mjs', import.meta.url));
let dir: string;
let db: DbSandbox;
let relay: PgRelay;
let sentinel: http.Server;
let sentinelUrl: string;
let hits = 0;
const fsRoot = '/srv/tapedeck-test-world';

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tapedeck-services-'));
  db = await openDbSandbox(notesSnapshot('seeded'), { kind: 'pglite' });
  relay = await startPgRelay(pgTargetOf(db.url));
  sentinel = http.createServer((_req, res) => {
    hits++;
    res.end('real');
  });
  await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.1', resolve));
  sentinelUrl = `http://127.0.0.1:${(sentinel.address() as AddressInfo).port}/`;
  writeFileSync(
    path.join(dir, 'seed.json'),
    JSON.stringify({
      files: [[`${fsRoot}/profile.txt`, 0o644, Buffer.from('the recorded profile').toString('base64')]],
    }),
  );
});
afterAll(async () => {
  await relay?.close();
  await db?.close();
  sentinel?.close();
  rmSync(dir, { recursive: true, force: true });
});

const isolation = (): ServiceIsolation => ({
  dir,
  fsRoot,
  seedFile: path.join(dir, 'seed.json'),
  allow: [{ host: relay.host, port: relay.port }],
  // The "recorded database" lives at 127.0.0.1:15999 in this test; a connection there is routed to the relay.
  routes: [{ from: { host: '127.0.0.1', port: 15999 }, to: { host: relay.host, port: relay.port } }],
});

describe('a sandbox service started from a command', () => {
  it('answers against the sandbox database and files, and reaches nothing else', async () => {
    const escapeFile = path.join(dir, 'escaped.txt');
    const service = await startService(
      {
        origin: '${env.API_URL}',
        command: ['node', SERVICE],
        env: {
          DB_URL: '${sandbox.db}',
          PORT: '${port}',
          FILES: '${sandbox.files}',
          SENTINEL_URL: sentinelUrl,
          ESCAPE_FILE: escapeFile,
        },
        ready: '/health',
      },
      { db: relay.url(), files: fsRoot, env: { API_URL: 'http://127.0.0.1:8787/' } },
      isolation(),
    );
    try {
      expect(service.origin).toBe('http://127.0.0.1:8787');
      expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${service.url}/notes`)).json()).toEqual({ notes: [{ id: 'n1', body: 'seeded' }] });
      expect((await fetch(`${service.url}/notes`, { method: 'POST' })).status).toBe(201);
      expect(await db.query('SELECT body FROM app.notes ORDER BY id')).toEqual([
        { body: 'seeded' },
        { body: 'written by the service' },
      ]);
      // Whatever URL it names, a connection to the recorded database's address lands in the sandbox.
      const routed = encodeURIComponent('postgres://someone:pw@127.0.0.1:15999/production');
      expect(
        ((await (await fetch(`${service.url}/notes?db=${routed}`)).json()) as { notes: unknown[] }).notes,
      ).toHaveLength(2);
      // Files: the sandbox's copy, never the disk.
      expect(await (await fetch(`${service.url}/file`)).json()).toEqual({ before: 'the recorded profile' });
      expect(existsSync(escapeFile)).toBe(false);
      expect(existsSync(`${fsRoot}/profile.txt`)).toBe(false);
      // The network: refused and reported, the sentinel never hit.
      expect(await (await fetch(`${service.url}/escape`)).json()).toEqual({ out: 'refused: ECONNREFUSED' });
      expect(hits).toBe(0);
      expect(service.blocked()).toEqual([sentinelUrl.replace(/^http:\/\/|\/$/g, '')]);
    } finally {
      await service.close();
    }
    // Stopped: nothing listens on its port any more.
    await expect(fetch(`${service.url}/health`)).rejects.toThrow();
  });

  it('says why when the service dies before it is ready', async () => {
    await expect(
      startService(
        { origin: 'http://127.0.0.1:8787', command: 'echo "cannot open the database" >&2; exit 3 # ${port}' },
        { env: {} },
        isolation(),
      ),
    ).rejects.toThrow(
      /service "http:\/\/127\.0\.0\.1:8787" \(sh -c .*\) exited with code 3 before it was ready:\n {2}cannot open the database/,
    );
  });

  it('refuses a service that would not get its own port, and names a missing placeholder value', async () => {
    await expect(
      startService({ origin: 'http://127.0.0.1:8787', command: 'node api.js' }, { env: {} }, isolation()),
    ).rejects.toMatchObject({ code: 'BAD_CONFIG', message: expect.stringContaining('give it its port with ${port}') });
    await expect(
      startService({ name: 'api', origin: '${env.API_URL}', command: 'node api.js ${port}' }, { env: {} }, isolation()),
    ).rejects.toThrow('service "api": origin: ${env.API_URL} — the agent\'s environment has no API_URL');
  });
});

describe.runIf(detectIsolation().level === 'bwrap')('a sandbox service in the OS sandbox', () => {
  it("runs with the agent's isolation: the sandbox database and files, and no program it runs reaches anything real", {
    timeout: 120_000,
  }, async () => {
    const real = await realDir('service-');
    const realFile = path.join(real.dir, 'real.txt');
    writeFileSync(realFile, 'real\n');
    const service = await startService(
      {
        origin: 'http://127.0.0.1:8787',
        command: ['node', SERVICE],
        env: {
          DB_URL: '${sandbox.db}',
          PORT: '${port}',
          FILES: '${sandbox.files}',
          SENTINEL_URL: sentinelUrl,
          ESCAPE_FILE: path.join(real.dir, 'escaped.txt'),
          REAL_FILE: realFile,
        },
        ready: '/health',
        readyTimeoutMs: 60_000,
      },
      { db: relay.url(), files: fsRoot, env: {} },
      { ...isolation(), os: detectIsolation() },
    );
    try {
      const before = hits;
      // The sandbox database through the relay, and through the recorded database's address.
      expect(
        ((await (await fetch(`${service.url}/notes`)).json()) as { notes: unknown[] }).notes.length,
      ).toBeGreaterThan(0);
      const routed = encodeURIComponent('postgres://someone:pw@127.0.0.1:15999/production');
      expect((await fetch(`${service.url}/notes?db=${routed}`)).status).toBe(200);
      expect(await (await fetch(`${service.url}/file`)).json()).toEqual({ before: 'the recorded profile' });
      expect(existsSync(path.join(real.dir, 'escaped.txt'))).toBe(false);
      // Programs: curl finds no network, sh no writable real file.
      const shell = (await (await fetch(`${service.url}/shell`)).json()) as { curl: string; write: string };
      expect(shell.curl).toMatch(/^failed/);
      expect(shell.write).toMatch(/^failed/);
      expect(readFileSync(realFile, 'utf8')).toBe('real\n');
      expect(await (await fetch(`${service.url}/escape`)).json()).toEqual({ out: 'refused: ECONNREFUSED' });
      expect(hits).toBe(before);
      // Each attempt is named: the guard's refusal, and (strace) the programs' connect and write.
      const port = new URL(sentinelUrl).port;
      const blocked = service.blocked().join('\n');
      expect(blocked).toContain(`127.0.0.1:${port}`);
      // strace's lines reach the launcher a moment after the refusal, over the init's IPC: waited for (bounded).
      if (detectIsolation().strace)
        await expect.poll(() => service.blocked().join('\n'), { timeout: 15_000, interval: 50 }).toContain(realFile);
    } finally {
      await service.close();
      await real.remove();
    }
    await expect(fetch(`${service.url}/health`)).rejects.toThrow();
  });
});

describe('a sandbox service from an image (testcontainers)', () => {
  it('fails at once and clearly without a Docker engine', { timeout: 120_000 }, async () => {
    // Loading testcontainers can take seconds on a loaded machine; what must be quick is the refusal.
    await import('testcontainers');
    const started = Date.now();
    await expect(
      startService(
        { name: 'payments', origin: 'http://127.0.0.1:9999', image: 'org/payments:1.2', port: 8080 },
        { env: {} },
        isolation(),
      ),
    ).rejects.toMatchObject({
      code: 'NO_CONTAINER_RUNTIME',
      message: expect.stringMatching(/^service "payments" runs from an image, and no Docker engine is reachable/),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
