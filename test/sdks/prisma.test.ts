// Prisma ORM 7 (`prisma` + `@prisma/client` + `@prisma/adapter-pg`), unchanged: an order desk on
// the openai SDK whose tools read and write a real Postgres database through the client Prisma
// generates (test/sdks/agents/prisma-agent.mjs). The client is generated here, offline, into a
// folder git ignores: Prisma 7 runs no engine binary (its query compiler is wasm, the SQL goes
// through the agent's own pg Pool), but its CLI still checks for the schema engine's binary before
// `generate`, which never runs it; PRISMA_SCHEMA_ENGINE_BINARY names a stand-in that says so.
// Driven through the whole CLI journey (test/sdks/journey.ts) with `record --db`: an interactive
// $transaction whose order id and timestamp Prisma's runtime draws itself, quoted mixed-case
// tables, an enum, a Decimal and a Json column; the real rows are the sentinel of every replay.
import { execFile } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { type DbChangedPayload, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase } from '../record/helpers.js';
import { AGENTS, expectedBuckets, installedVersion, ROOT, tempDir } from './harness.js';
import { type JourneyWire, runJourney } from './journey.js';
import { type FakeOpenAI, startFakeOpenAI } from './servers/fake-openai.js';
import { startWeatherApi } from './servers/weather-api.js';

const BASE = process.env.TAPEDECK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PROMPT = 'You are an order desk. Use find_customer, then get_forecast, then place_order, then answer.';
const SCHEMA = path.join(AGENTS, 'prisma/schema.prisma');

/** `prisma generate`, offline: the stand-in schema engine fails loudly if anything ever runs it. */
async function generateClient(dir: string): Promise<void> {
  const engine = path.join(dir, 'no-schema-engine');
  writeFileSync(engine, '#!/bin/sh\necho "the schema engine is not available offline" >&2\nexit 1\n');
  chmodSync(engine, 0o755);
  await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'node_modules/prisma/build/index.js'), 'generate', '--schema', SCHEMA],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: engine,
        CHECKPOINT_DISABLE: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
      },
      timeout: 120_000,
    },
  );
}

/** Chat Completions, not streamed: the FAKE model's usage on every call, read from what it sent. */
function chatWire(model: FakeOpenAI): JourneyWire {
  return {
    provider: 'openai',
    api: 'chat.completions',
    systemOf: (body) =>
      (body.messages as Array<{ role: string; content: unknown }>).find((m) => m.role === 'system')?.content,
    toolCallsOf: (i) => (model.calls[i]?.toolCall ? [model.calls[i].toolCall.name] : []),
    usageOf: (i) => expectedBuckets(model.calls[i]?.usage ?? {}),
  };
}

let tmp: ReturnType<typeof tempDir>;
let db: Awaited<ReturnType<typeof scratchDatabase>>;
beforeAll(async () => {
  tmp = tempDir();
  await generateClient(tmp.dir);
  db = await scratchDatabase(BASE, 'tapedeck_prisma_', readFileSync(path.join(AGENTS, 'prisma/shop.sql'), 'utf8'));
}, 180_000);
afterAll(async () => {
  await db?.drop();
  tmp?.remove();
});

async function query<T>(sql: string, url = db.url): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** The real world, read apart from tapedeck and Prisma. */
async function world(url = db.url): Promise<unknown> {
  return {
    products: await query('SELECT sku, stock, price::text FROM shop."Product" ORDER BY sku', url),
    orders: await query(
      'SELECT id, customer_id, status::text, total::text, meta, created_at FROM shop."Order" ORDER BY id',
      url,
    ),
    lines: await query('SELECT * FROM shop.order_lines ORDER BY id', url),
  };
}

/** What the FAKE model asks of each tool. */
const ARGS = {
  find_customer: { email: 'ada@example.com' },
  get_forecast: { city: 'Paris' },
  place_order: { email: 'ada@example.com', sku: 'KB-1', qty: 2 },
};

const CONTRACT = `task_id: order_desk_001
input: { user_instruction: Order 2 keyboards (KB-1) for ada@example.com and tell me when they ship. }
success_criteria:
  required_outputs: [final_answer]
  must_include: [placed]
fields: { placed: 'PLACED' }
execution:
  action: { tool: place_order }
  target: { table: shop.order_lines, sku: KB-1 }
  parameters: { qty: 2 }
  max_executions: 1
expected_state:
  rows:
    - { table: shop.Product, where: { sku: KB-1 }, count: 1, equals: { stock: 3 } }
    - { table: shop.Order, where: { status: PLACED }, count: 1, equals: { total: '99.80' } }
    - { table: shop.order_lines, where: { sku: KB-1 }, count: 1, equals: { qty: 2 } }
  side_effects: fail
rules:
  - { id: order, order: [find_customer, get_forecast, place_order] }
`;

describe(`Prisma ORM (prisma ${installedVersion('prisma')}, @prisma/client ${installedVersion('@prisma/client')}, @prisma/adapter-pg ${installedVersion('@prisma/adapter-pg')})`, () => {
  it('goes through record --db, verify, exact and changed-prompt replays, ledger, eval and bisect with the CLI', {
    timeout: 400_000,
  }, async () => {
    const model = await startFakeOpenAI({
      toolPlan: ['find_customer', 'get_forecast', 'place_order'],
      toolArgs: ARGS,
    });
    const weather = await startWeatherApi();
    try {
      const { recorded } = await runJourney({
        agent: 'prisma-agent.mjs',
        env: {
          OPENAI_BASE_URL: `${model.url}/v1`,
          OPENAI_API_KEY: 'sk-fake-prisma',
          WEATHER_URL: weather.url,
          DATABASE_URL: db.url,
        },
        worldFlags: ['--db', db.url, '--db-schema', 'shop'],
        steps: [
          ['THINK', 'fake-gpt-1'],
          ['THINK', 'fake-gpt-1'],
          ['API_CALL', 'get_forecast'],
          ['THINK', 'fake-gpt-1'],
          ['DB_QUERY', 'place_order'],
          ['FINALIZE', 'fake-gpt-1'],
        ],
        prompt: PROMPT,
        wire: chatWire(model),
        model,
        weather,
        patch: ['order desk', 'careful order desk'],
        newPrompt: 'You are a terse order desk.',
        world: () => world(),
        contract: CONTRACT,
        dir: tmp.dir,
      });
      const orders = await query<{ id: string; created_at: Date }>('SELECT id, created_at FROM shop."Order"');
      expect(orders).toHaveLength(1);
      // The order's id and time were drawn by Prisma's runtime in the agent: the recording holds them.
      const events = readFileSync(path.join(recorded.dir, 'events.jsonl'), 'utf8');
      expect(events).toContain(orders[0]?.id);
      expect(recorded.agentStdout).toContain(orders[0]?.created_at.toISOString());
      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.runtime.sdkVersions).toMatchObject({ openai: installedVersion('openai') });
      expect(weather.hits()).toBe(1);
    } finally {
      await model.close();
      await weather.close();
    }
  });

  // The same desk recorded in-process (`record()` around the agent's own function) with the default
  // observed world: what the run's pg Pool read and wrote, seen through Prisma's statements (array
  // rows, its own type parsers, quoted names, an interactive transaction), with no trigger and no
  // DDL in the database; replayed from its command in a sandbox seeded from the rows it touched.
  it('records the desk in-process with the observed world, and replays it from its command with the real world untouched', {
    timeout: 400_000,
  }, async () => {
    const own = await scratchDatabase(
      BASE,
      'tapedeck_prisma_obs_',
      readFileSync(path.join(AGENTS, 'prisma/shop.sql'), 'utf8'),
    );
    const model = await startFakeOpenAI({ toolPlan: ['find_customer', 'get_forecast', 'place_order'], toolArgs: ARGS });
    const weather = await startWeatherApi();
    const env = {
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: 'sk-fake-prisma',
      WEATHER_URL: weather.url,
      DATABASE_URL: own.url,
    };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const agent = path.join(AGENTS, 'prisma-agent.mjs');
      // Loaded before the run, as a server loads it: what its top level draws (tsx's register()
      // takes a uuid) is not the run's, and the replayed command draws its own.
      const { runOrderDesk } = (await import(agent)) as { runOrderDesk(): Promise<string> };
      const run = await record(
        // The values Prisma's runtime draws (its transaction ids, the order's uuid and time) are
        // recorded, to be given back from the run's start in the command.
        {
          out: path.join(tmp.dir, 'observed'),
          name: 'prisma-desk',
          command: [process.execPath, agent],
          nondeterminism: true,
        },
        () => runOrderDesk(),
      );
      expect(run.recorded).toBe(true);
      const recording = await readRecording(run.dir);
      expect(recording.manifest.world?.db).toMatchObject({ mode: 'observed', schemas: ['shop'] });
      const changes = recording.events.flatMap((e) => (e.type === 'db.changed' ? [e.payload as DbChangedPayload] : []));
      const [order] = await query<{ id: string }>('SELECT id FROM shop."Order"', own.url);
      expect(changes.map((c) => `${c.op} ${c.table} ${JSON.stringify(c.key)}`)).toEqual([
        'update Product {"sku":"KB-1"}',
        `insert Order {"id":"${order?.id}"}`,
        'insert order_lines {"id":1}',
      ]);
      expect(changes[0]).toMatchObject({ before: { stock: 5, price: '49.90' }, after: { stock: 3 } });
      expect(changes[1]?.after).toMatchObject({ status: 'PLACED', total: '99.80', customer_id: 1 });
      // The customer read through include: the row its order references, imaged as it was.
      const pre = new Map(recording.pre.db?.tables.map((t) => [t.name, t.rows]));
      expect(pre.get('Customer')).toEqual([{ id: 1, email: 'ada@example.com', name: 'Ada', city: 'Paris' }]);
      const objects = await query(
        `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'shop')
          UNION ALL SELECT tgname FROM pg_trigger WHERE NOT tgisinternal`,
        own.url,
      );
      expect(objects).toEqual([]);

      // Replayed from its command: the world from the recording (the real rows and the tool API
      // untouched, nothing live). What the command draws loading the agent through tsx is its own;
      // the run's values are given back from its start: the order's uuid and its createdAt
      // (@default(now())) are the recorded ones, the answer byte for byte.
      const before = await world(own.url);
      const hits = weather.hits();
      const replayed = await replay({
        recording: run.dir,
        mode: 'exact',
        out: path.join(tmp.dir, 'observed-exact'),
        stdio: 'pipe',
        env: { OPENAI_BASE_URL: env.OPENAI_BASE_URL, OPENAI_API_KEY: env.OPENAI_API_KEY, WEATHER_URL: env.WEATHER_URL },
        timeoutMs: 180_000,
      });
      expect(replayed.status, replayed.output?.stderr).toBe('complete');
      expect(replayed.served.live).toBe(0);
      expect(replayed.output?.stdout).toContain(`"id":"${order?.id}"`);
      expect(replayed.output?.stdout).toContain(`FINAL: ${run.result}`);
      expect(await world(own.url)).toEqual(before);
      expect(weather.hits()).toBe(hits);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await model.close();
      await weather.close();
      await own.drop();
    }
  });
});
