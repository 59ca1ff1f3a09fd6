// The escape suite: a replayed agent tries every way out (child processes of every kind, a
// worker, fs calls that change real files, UDP, DNS, raw bindings, IPv6, a Unix socket, HTTP/2,
// a WebSocket, a signal, a real database) against sentinels that see the real world. In exact
// and counterfactual replay, in the OS sandbox and in the fallback: nothing real is touched and
// the replay is never clean — every attempt is reported.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
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
    });
    env = {
      ESCAPE_PORT: String(sentinels.port),
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
          out: path.join(real.dir, `replay-${isolation}-${mode}`),
          stdio: 'pipe',
          env,
          timeoutMs: 120_000,
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
        if (db) expect(await db.rows()).toBe(0);
        // Never clean, and each attempt named.
        expect(result.divergences.length).toBeGreaterThan(0);
        const expected = [
          `127.0.0.1:${sentinels.port}`, // curl, wget, python, node children, http2, websocket
          `${sentinels.udpPort}`, // UDP and the DNS resolver's server
          sentinels.socketPath.slice(-40),
        ];
        if (isolation === 'none')
          expected.push('sh', 'curl', 'wget', 'python3', 'psql', `pid ${sentinels.pid}`, 'tcp_wrap');
        else expected.push(`pid ${sentinels.pid}`, ':5432');
        for (const text of expected) expect(report, `${text} not reported: ${JSON.stringify(seen)}`).toContain(text);
      });
    }
  }
});
