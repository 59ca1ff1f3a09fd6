// An agent whose tools shell out (curl, psql with PG* variables and -f files, a python3 script it
// writes, pg configured by PG* alone or by a variable not named DATABASE_URL), recorded with
// --isolate --db and replayed in the OS sandbox: every call a step, the exact replay without a
// divergence, the counterfactual one past its new calls, and nothing reaching the real API or
// database (a hit counter and the real tables, unchanged after every replay). Without the OS
// sandbox the programs are refused and said so, and the Node client still reaches only the sandbox.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer } from '../../examples/world/model-server.js';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { keeperFailed } from '../../sandbox/os/netns.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording, silentToolCallWarnings } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, startServer, type TestServer, tempDir } from '../record/helpers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'shell-tools-agent.mjs');
const has = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
const MISSING = ['curl', 'psql', 'python3'].filter((p) => !has(p));
if (MISSING.length > 0) console.warn(`shell-tools.test.ts skipped: ${MISSING.join(', ')} not installed`);

/** The bubblewrap processes this process started that still run (a recording's sandbox left open). */
const sandboxChildren = () =>
  readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        const stat = /^\d+ \((.*)\) \S+ (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        return stat?.[1] === 'bwrap' && Number(stat[2]) === process.pid;
      } catch {
        return false;
      }
    });

const SCHEMA = `
  CREATE SCHEMA shop; CREATE SCHEMA audit;
  CREATE TABLE shop.orders (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer text NOT NULL);
  CREATE TABLE shop.order_line (order_id int REFERENCES shop.orders (id) ON DELETE CASCADE, line_no int,
    sku text, qty int, price numeric(10,2) DEFAULT 5, total numeric GENERATED ALWAYS AS (qty * price) STORED,
    status text NOT NULL DEFAULT 'open', PRIMARY KEY (order_id, line_no));
  CREATE TABLE shop.note (id serial PRIMARY KEY, body text);
  CREATE TABLE audit.event (id bigserial PRIMARY KEY, kind text, tags text[], data jsonb);
  CREATE TABLE public.sentinel (n int);
  INSERT INTO public.sentinel VALUES (42);
  INSERT INTO shop.orders (customer) VALUES ('ann');
  INSERT INTO shop.order_line (order_id, line_no, sku, qty) VALUES (1, 1, 'A1', 2), (1, 2, 'B2', 1);`;

const PLAN = [
  { name: 'curl_get', args: { q: 'widgets' } },
  { name: 'curl_post', args: { sku: 'A1', qty: 2 } },
  { name: 'psql_read', args: {} },
  { name: 'psql_file', args: { note: 'from a file' } },
  { name: 'python_api', args: { sku: 'B2' } },
  { name: 'pg_env', args: { note: 'by PG variables' } },
  { name: 'pg_custom', args: { sku: 'C3' } },
];
/** What the changed prompt adds: an order the recording never saw, and another note through psql -f. */
const EXTRA = [
  { name: 'curl_post', args: { sku: 'Z9', qty: 1 } },
  { name: 'psql_file', args: { note: 'extra' } },
];

describe.runIf(PG_URL && detectIsolation().level === 'bwrap' && MISSING.length === 0)(
  'an agent whose tools run curl, psql and python3',
  () => {
    const tmp = tempDir('tapedeck-shell-tools-');
    let api: TestServer;
    let hits = 0;
    let model: Awaited<ReturnType<typeof startModelServer>>;
    let db: Awaited<ReturnType<typeof scratchDatabase>>;
    let real: pg.Client;
    let recording: string;
    let silentToolCalls: string[] | undefined;
    /** The real world as the recorded run left it: every table's rows, and the API's hits. */
    let worldAfterRecord: string;

    const realWorld = async () => {
      const { rows } = await real.query(
        `SELECT (SELECT json_agg(n ORDER BY id) FROM shop.note n) AS notes,
                (SELECT json_agg(l ORDER BY order_id, line_no) FROM shop.order_line l) AS lines,
                (SELECT json_agg(e ORDER BY id) FROM audit.event e) AS events,
                (SELECT json_agg(s) FROM public.sentinel s) AS sentinel`,
      );
      return JSON.stringify({ rows: rows[0], hits });
    };

    beforeAll(async () => {
      api = await startServer((req, body, res) => {
        hits++;
        res.setHeader('content-type', 'application/json');
        const url = new URL(req.url ?? '/', 'http://x');
        if (req.method === 'GET' && url.pathname === '/items')
          res.end(JSON.stringify({ items: [{ sku: 'A1' }, { sku: 'B2' }], q: url.searchParams.get('q') }));
        else if (req.method === 'POST' && url.pathname === '/orders')
          res.end(JSON.stringify({ id: hits, ...JSON.parse(body || '{}'), by: 'real api' }));
        else res.writeHead(404).end('{}');
      });
      model = await startModelServer({
        policy: (c) => {
          const plan = c.system.includes('EXTRA') ? [...PLAN, ...EXTRA] : PLAN;
          const next = plan[c.calls.length];
          return next ? { kind: 'tool_calls', say: '', calls: [next] } : { kind: 'final', text: 'done' };
        },
      });
      db = await scratchDatabase(PG_URL as string, 'shell_tools_', SCHEMA);
      real = new pg.Client({ connectionString: db.url });
      await real.connect();
      const u = new URL(db.url);
      recording = path.join(tmp.dir, 'recorded');
      const recorded = await recordCommand({
        command: [process.execPath, AGENT],
        env: {
          MODEL_URL: model.url,
          SHOP_API: api.url,
          // psql and pg read these; the URL is only in SHOP_DB, a name tapedeck does not know.
          PGHOST: u.hostname,
          PGPORT: u.port || '5432',
          PGDATABASE: u.pathname.slice(1),
          PGUSER: decodeURIComponent(u.username) || 'postgres',
          // The same database as --db's 127.0.0.1, by another loopback name.
          SHOP_DB: db.url.replace('127.0.0.1', 'localhost'),
        },
        out: recording,
        stdio: 'pipe',
        isolate: true,
        dbUrl: db.url,
      });
      expect(recorded.exitCode).toBe(0);
      silentToolCalls = recorded.silentToolCalls;
      worldAfterRecord = await realWorld();
    }, 120_000);

    afterAll(async () => {
      await real?.end();
      await db?.drop();
      await api?.close();
      await model?.close();
      tmp.remove();
    });

    it('records every call of every program as a step of the right type', async () => {
      const rec = await readRecording(recording);
      const http = rec.events
        .filter((e) => e.type === 'tool.called')
        .map((e) => {
          const p = e.payload as { name: string; stateType: string };
          return `${p.stateType} ${p.name}`;
        });
      // curl's GET and POST, python's GET and POST.
      expect(http).toEqual([
        'API_CALL GET /items',
        'API_CALL POST /orders',
        'API_CALL GET /items',
        'API_CALL POST /orders',
      ]);
      const changes = rec.events
        .filter((e) => e.type === 'db.changed')
        .map((e) => {
          const p = e.payload as { schema: string; table: string; op: string };
          return `${p.op} ${p.schema}.${p.table}`;
        });
      // psql -f's note, pg's event (PG* variables), pg's order line (SHOP_DB).
      expect(changes).toEqual(['insert shop.note', 'insert audit.event', 'insert shop.order_line']);
      // psql -c 'select …' only read the database: no step, and no alarm that a replay cannot answer it.
      expect(silentToolCalls).toEqual([
        expect.stringMatching(/tool "psql_read" .* may only have read the captured database/),
      ]);
      expect(silentToolCallWarnings(rec.events, { database: true })).toEqual(silentToolCalls);
      // A world with no view, trigger or function of its own has nothing the sandbox lacks (tapedeck's
      // capture triggers are not the world's).
      expect(rec.pre.db?.unbuilt).toBeUndefined();
      expect(rec.post.db?.unbuilt).toBeUndefined();
    });

    it('replays exactly in the OS sandbox: no divergence, the recorded end state, nothing real reached', async () => {
      const result = await replay({
        recording,
        mode: 'exact',
        out: path.join(tmp.dir, 'exact'),
        stdio: 'pipe',
        isolation: 'bwrap',
        timeoutMs: 120_000,
      });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      // The SQL file and the script node wrote in the sandbox's /tmp are there for psql and python3.
      const out = result.output?.stdout ?? '';
      expect(out).toContain('[psql_read] A1|2|10.00\nB2|1|5.00');
      expect(out).toMatch(/\[psql_file\] INSERT 0 1\n1\n/);
      expect(out).toContain('"order": {"id": 4, "sku": "B2", "qty": 1, "by": "real api"}');
      expect(out).toContain('[pg_custom] [{"total":"10.00"}]');
      expect(result.worldDiff).toEqual([]);
      expect(result.worldMatches).toBe(true);
      expect(result.sideChannels ?? []).toEqual([]);
      expect(await realWorld()).toBe(worldAfterRecord);
    }, 180_000);

    it('replays a changed prompt past its new calls: new SQL in the sandbox, a new POST held back', async () => {
      const result = await replay({
        recording,
        mode: 'counterfactual',
        systemPrompt: 'You run the shop. EXTRA',
        out: path.join(tmp.dir, 'counterfactual'),
        stdio: 'pipe',
        isolation: 'bwrap',
        onMiss: 'error-response',
        timeoutMs: 120_000,
      });
      expect(result.status, result.output?.stderr).toBe('complete');
      expect(result.exitCode).toBe(0);
      const out = result.output?.stdout ?? '';
      // The extra note went into the sandbox database (the second note there), through psql -f.
      expect(out).toMatch(/\[psql_file\] INSERT 0 1\n2\n/);
      expect(out).toContain('final: done');
      expect(result.heldBack.map((h) => `${h.method} ${new URL(h.target).pathname}`)).toEqual(['POST /orders']);
      // The agent's own writes are steps of their own, named after the tool, never on a model step.
      const replayed = await readRecording(result.dir);
      const typeOf = new Map<number, string>();
      for (const e of replayed.events)
        if (e.type === 'step.started') {
          const p = e.payload as { stateType: string; name: string };
          typeOf.set(e.stepId, `${p.stateType} ${p.name}`);
        }
      const written = replayed.events
        .filter((e) => e.type === 'db.changed')
        .map((e) => `${typeOf.get(e.stepId)}: ${(e.payload as { table: string }).table}`);
      expect(written).toEqual([
        'DB_QUERY psql_file: note',
        'DB_QUERY pg_env: event',
        'DB_QUERY pg_custom: order_line',
        'DB_QUERY psql_file: note',
      ]);
      expect(await realWorld()).toBe(worldAfterRecord);
    }, 180_000);

    it('ends a recording whose database door cannot open, with the reason, leaving nothing running', async () => {
      // Without the keeper of its network namespace (sandbox/os/netns.ts: a machine that has no
      // nsenter, or lets only bubblewrap make user namespaces), a port below 1024 cannot be listened
      // on inside (no capabilities): the run cannot be served.
      keeperFailed();
      try {
        await expect(
          recordCommand({
            command: [process.execPath, AGENT],
            env: { MODEL_URL: model.url, OTHER_DB: 'postgres://app@127.0.0.1:80/app' },
            out: path.join(tmp.dir, 'no-door'),
            stdio: 'pipe',
            isolate: true,
          }),
        ).rejects.toThrow(/Cannot listen on 127\.0\.0\.1:80 inside the sandbox/);
      } finally {
        keeperFailed(false);
      }
      expect(sandboxChildren()).toEqual([]);
    }, 60_000);

    it('without the OS sandbox refuses the programs, says so, and keeps the pg clients in the sandbox', async () => {
      const result = await replay({
        recording,
        mode: 'exact',
        out: path.join(tmp.dir, 'none'),
        stdio: 'pipe',
        isolation: 'none',
        timeoutMs: 120_000,
      });
      const out = result.output?.stdout ?? '';
      for (const program of ['curl', 'psql', 'python3'])
        expect(out).toContain(`running ${program} is refused in a tapedeck replay without the OS sandbox`);
      expect(out).toContain('[pg_custom] [{"total":"10.00"}]');
      expect(result.divergences.length).toBeGreaterThan(0);
      expect(await realWorld()).toBe(worldAfterRecord);
    }, 180_000);
  },
);
