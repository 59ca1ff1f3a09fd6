// The escape suite: a replayed agent tries every way out (child processes of every kind, a
// worker, fs calls that change real files, UDP, DNS, raw bindings, IPv6, a Unix socket, HTTP/2,
// a WebSocket, a signal, a real database on the server its sandbox database is cloned on)
// against sentinels that see the real world, each network vector on a port of its own. In exact
// and counterfactual replay, in the OS sandbox and in the fallbacks: nothing real is touched and
// the replay is never clean — every attempt is reported (by its port, path or command).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import type { DbSnapshot } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { writeRecording } from '../replay/build.js';
import { realDir, type Sentinels, startDbSentinel, startSentinels } from './helpers.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const PG_URL = process.env.TAPEDECK_PG_URL;
// The OS sandbox where the machine has it; the fallbacks always: a network namespace alone
// (unshare) where user namespaces work, and the in-process preload alone.
const found = detectIsolation();
const levels: Array<'bwrap' | 'unshare' | 'none'> = [
  ...(found.level === 'bwrap' ? (['bwrap'] as const) : []),
  ...(found.level !== 'none' && found.unshare ? (['unshare'] as const) : []),
  'none',
];

describe('escape suite', () => {
  let sentinels: Sentinels;
  let real: { dir: string; remove(): Promise<void> };
  let db: Awaited<ReturnType<typeof startDbSentinel>> | undefined;
  let recording: string;
  let env: Record<string, string>;
  const tmpEscapes = () => readdirSync(tmpdir()).filter((n) => n.startsWith('tapedeck-escape-')).length;
  let tmpBefore = 0;

  beforeAll(async () => {
    real = await realDir('escape-');
    sentinels = await startSentinels(real.dir);
    if (PG_URL) db = await startDbSentinel(PG_URL);
    recording = await writeRecording(path.join(real.dir, 'rec'), {
      command: [process.execPath, path.join(FIXTURES, 'escape-agent.mjs')],
      calls: [],
      // Recorded against another address than the server the sandbox database is cloned on: the
      // server itself (any database on it) must be no way out.
      ...(PG_URL ? { db: refundsSnapshot(), dbUrl: 'postgres://db.recorded.test:5432/app' } : {}),
    });
    env = {
      ESCAPE_PORTS: JSON.stringify(sentinels.ports),
      ESCAPE_PORT6: String(sentinels.port6),
      ESCAPE_UDP: String(sentinels.udpPort),
      ESCAPE_SOCKET: sentinels.socketPath,
      ESCAPE_FILE: sentinels.file,
      ESCAPE_PID: String(sentinels.pid),
      ESCAPE_TMP: tmpdir(),
      ESCAPE_CHILD: path.join(FIXTURES, 'escape-child.cjs'),
      ESCAPE_DB: db?.url ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    };
    tmpBefore = tmpEscapes();
  });
  afterAll(async () => {
    await db?.drop();
    await sentinels?.close();
    await real?.remove();
  });

  for (const isolation of levels) {
    for (const mode of ['exact', 'counterfactual'] as const) {
      it(`${isolation}, ${mode}: 0 hits, 0 rows, 0 files, no signal, every attempt reported`, {
        timeout: 240_000,
      }, async () => {
        const result = await replay({
          recording,
          mode,
          isolation,
          // Hand-made and hostile by design: its command runs because the test says so, in the sandbox.
          trustRecording: true,
          out: path.join(real.dir, `replay-${isolation}-${mode}`),
          stdio: 'pipe',
          env,
          timeoutMs: 120_000,
          // The template sandbox: a clone on the same server as the real database.
          ...(PG_URL ? { db: PG_URL } : {}),
        });
        const seen = JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '{}') as Record<string, string>;
        const report = JSON.stringify([result.divergences, result.sideChannels ?? [], result.blockedConnections]);
        // Nothing real was touched.
        expect(sentinels.hits(), JSON.stringify(seen)).toBe(0);
        expect(readFileSync(sentinels.file, 'utf8')).toBe(sentinels.fileContent);
        expect(statSync(sentinels.file).mode & 0o777).toBe(0o644);
        expect(statSync(sentinels.file).uid).toBe(process.getuid?.() ?? 0);
        expect(sentinels.signalled()).toBe(false);
        expect(tmpEscapes()).toBe(tmpBefore);
        if (db) {
          expect(await db.rows()).toBe(0);
          // The agent's own client reached a database, and it was the sandbox's.
          if (isolation !== 'none') {
            expect(seen['pg-node']).toBe('inserted 1');
            // psql, a program, runs in the OS sandbox only (the fallbacks refuse it).
            if (isolation === 'bwrap') expect(seen.psql).toContain('INSERT 0 1');
          }
        }
        // Never clean, and each attempt named.
        expect(result.divergences.length).toBeGreaterThan(0);
        const { tcpwrap: _raw, ...byPort } = sentinels.ports;
        const expected = [
          // curl, wget, python, the node child, fork, the worker, http2, the WebSocket: each by its own port
          ...Object.values(byPort).map((port) => `127.0.0.1:${port}`),
          'tcp_wrap',
          `::1:${sentinels.port6}`,
          `${sentinels.udpPort}`, // UDP and the DNS resolver's server
          sentinels.socketPath.slice(-40),
          // The real file outside the world: open with O_TRUNC, chown, lutimes, the worker's and sh's writes
          sentinels.file,
        ];
        if (isolation === 'none')
          expected.push(
            'sh',
            'curl',
            'wget',
            'python3',
            'psql',
            `pid ${sentinels.pid}`,
            ...(db ? ['127.0.0.1:5432'] : []),
          );
        else expected.push(`pid ${sentinels.pid}`);
        for (const text of expected) expect(report, `${text} not reported: ${JSON.stringify(seen)}`).toContain(text);
      });
    }
  }
});

/** The recorded world's database: an empty refunds table, as on the real one. */
function refundsSnapshot(): DbSnapshot {
  return {
    schemas: ['app'],
    ddl: ['CREATE TABLE app.refunds (id integer PRIMARY KEY, amount integer)'],
    tables: [
      {
        schema: 'app',
        name: 'refunds',
        columns: [
          { name: 'id', type: 'integer', nullable: false },
          { name: 'amount', type: 'integer', nullable: true },
        ],
        primaryKey: ['id'],
        rows: [],
      },
    ],
  };
}
