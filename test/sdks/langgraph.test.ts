// LangGraph.js (`@langchain/langgraph` StateGraph + ToolNode, looping to the model until it stops
// calling tools) on `@langchain/anthropic` ChatAnthropic, streaming, unchanged, against a FAKE
// Anthropic Messages server playing a scripted conversation: parallel tool calls in one turn, a
// tool that throws, tools on drizzle-orm over a pg Pool (a transaction with RETURNING, one rolled
// back), axios, fs/promises and a worker_threads Worker, rows stamped with Date.now() and
// crypto.randomUUID(). Driven through the whole CLI journey (test/sdks/journey.ts) with the real
// world as sentinel; then a MemorySaver thread resumed across two recorded runs, and a prompt
// change that removes an invented SKU, bisected.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import type { ReplayResult } from '../../src/replay/types.js';
import { tapedeck } from '../cli/run-cli.js';
import { scratchDatabase } from '../record/helpers.js';
import { installedVersion, ROOT, recordWithCli, steps, tempDir } from './harness.js';
import { type JourneyWire, runJourney } from './journey.js';
import {
  anthropicSystem,
  type FakeAnthropic,
  type ScriptedTurn,
  startFakeAnthropic,
} from './servers/fake-anthropic.js';

const BASE = process.env.TAPEDECK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PROMPT = 'You are a stock desk. Check stock and price, restock, forecast, audit, write the report, then answer.';

/** What the FAKE model ends with: each tool result it was handed, `!` marking an error. */
const finalText: ScriptedTurn = {
  final: (results) => results.map((r) => `${r.name}${r.isError ? '!' : ''}=${r.content}`).join(' | '),
};

/** The stock desk's script: turn 3 runs two tools at once, the second of which throws. */
function script(restocks: Array<{ sku: string; qty: number }>, report = 'W-1: restocked 5 units'): ScriptedTurn[] {
  return [
    {
      say: 'Checking stock and price.',
      calls: [
        { name: 'lookup_stock', input: { sku: 'W-1' } },
        { name: 'get_price', input: { sku: 'W-1' } },
      ],
    },
    { calls: restocks.map((input) => ({ name: 'restock', input })) },
    {
      calls: [
        { name: 'forecast', input: { sku: 'W-1', days: 7 } },
        { name: 'audit', input: { sku: 'W-1' } },
      ],
    },
    { calls: [{ name: 'write_report', input: { text: report } }] },
    finalText,
  ];
}

/** The supplier's price API (real, on 127.0.0.1), counting its hits. */
async function startSupplier(): Promise<{ url: string; hits(): number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    const sku = new URL(req.url ?? '/', 'http://supplier').searchParams.get('sku');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ sku, unitPrice: 4.5, currency: 'EUR' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The Messages wire, read from what the FAKE server sent (not from tapedeck's decoder). */
function anthropicWire(model: FakeAnthropic): JourneyWire {
  return {
    provider: 'anthropic',
    api: 'messages',
    systemOf: anthropicSystem,
    toolCallsOf: (i) => model.calls[i]?.toolCalls.map((c) => c.name) ?? [],
    usageOf: (i) => {
      const u = model.calls[i]?.usage;
      return (
        u && {
          inputUncached: u.input_tokens,
          cacheRead: u.cache_read_input_tokens,
          cacheWrite: u.cache_creation_input_tokens,
          output: u.output_tokens,
          reasoning: 0,
        }
      );
    },
  };
}

let tmp: ReturnType<typeof tempDir>;
let db: Awaited<ReturnType<typeof scratchDatabase>>;
let url: string;
beforeAll(async () => {
  tmp = tempDir();
  db = await scratchDatabase(BASE, 'tapedeck_langgraph_', 'SELECT 1');
  url = db.url;
});
afterAll(async () => {
  await db?.drop();
  tmp?.remove();
});

async function query<T>(sql: string): Promise<T[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return (await db.query(sql)).rows as T[];
  } finally {
    await db.end();
  }
}

/** A fresh stock desk: W-1 at 7 units, no restocks, an empty report folder. */
async function resetDesk(dir: string): Promise<void> {
  await query(`DROP TABLE IF EXISTS stock, restock_log;
    CREATE TABLE stock (sku text PRIMARY KEY, qty integer NOT NULL);
    INSERT INTO stock VALUES ('W-1', 7), ('W-2', 3);
    CREATE TABLE restock_log (id text PRIMARY KEY, sku text NOT NULL, qty integer NOT NULL, at bigint NOT NULL);`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

/** The real world, read apart from tapedeck: rows and the report file. */
async function world(dir: string): Promise<unknown> {
  const report = (() => {
    try {
      return readFileSync(path.join(dir, 'report.md'), 'utf8');
    } catch {
      return null;
    }
  })();
  return {
    stock: await query('SELECT * FROM stock ORDER BY sku'),
    log: await query('SELECT * FROM restock_log ORDER BY id'),
    report,
  };
}

type Supplier = Awaited<ReturnType<typeof startSupplier>>;
const agentEnv = (model: FakeAnthropic, supplier: Supplier, desk: string, extra: Record<string, string> = {}) => ({
  ANTHROPIC_BASE_URL: model.url,
  ANTHROPIC_API_KEY: 'sk-ant-fake-langgraph',
  DATABASE_URL: url,
  SUPPLIER_URL: supplier.url,
  REPORT_DIR: desk,
  ...extra,
});

/** A fresh desk (`name` its folder), the FAKE model playing `turns` and the supplier API, all closed after `run`. */
async function onDesk(
  name: string,
  turns: Parameters<typeof startFakeAnthropic>[0],
  run: (d: { model: FakeAnthropic; supplier: Supplier; desk: string }) => Promise<void>,
): Promise<void> {
  const model = await startFakeAnthropic(turns);
  const supplier = await startSupplier();
  const desk = path.join(tmp.dir, name);
  await resetDesk(desk);
  try {
    await run({ model, supplier, desk });
  } finally {
    await model.close();
    await supplier.close();
  }
}

/** `tapedeck record --db --fs <desk> -- node langgraph-agent.mjs <args>` into `out` under the test's folder. */
const recordDesk = (desk: string, env: Record<string, string>, out: string, args: string[] = []) =>
  recordWithCli({
    agent: 'langgraph-agent.mjs',
    args,
    flags: ['--db', url, '--fs', desk],
    env,
    out: path.join(tmp.dir, out),
  });

async function replayJson(args: string[], env: Record<string, string>): Promise<ReplayResult & { stderr: string }> {
  const run = await tapedeck(['replay', ...args, '--json'], { env, timeoutMs: 180_000 });
  return { ...(JSON.parse(run.stdout) as ReplayResult), stderr: run.stderr };
}

const CONTRACT = `task_id: stock_desk_001
input: { user_instruction: Restock widget W-1 and write the stock report. }
success_criteria:
  required_outputs: [final_answer]
  must_include: [restocked]
fields: { restocked: 'restock=' }
execution:
  action: { tool: restock }
  target: { table: public.restock_log, sku: W-1 }
  parameters: { qty: 5 }
  max_executions: 1
expected_state:
  rows:
    - { table: public.stock, where: { sku: W-1 }, count: 1, equals: { qty: 12 } }
    - { table: public.restock_log, where: { sku: W-1 }, count: 1, equals: { qty: 5 } }
  files:
    - { path: report.md, exists: true, matches: 'W-1: restocked 5 units' }
  side_effects: fail
rules:
  - { id: order, order: [lookup_stock, get_price, restock, forecast, write_report] }
  - { id: one_restock, tool: restock, max_calls: 1 }
`;

describe(`LangGraph.js (@langchain/langgraph ${installedVersion('@langchain/langgraph')}, @langchain/anthropic ${installedVersion('@langchain/anthropic')}, drizzle-orm ${installedVersion('drizzle-orm')})`, () => {
  it('goes through record, verify, exact and changed-prompt replays, ledger, eval and bisect with the CLI', {
    timeout: 400_000,
  }, async () => {
    await onDesk('desk', script([{ sku: 'W-1', qty: 5 }]), async ({ model, supplier, desk }) => {
      const { recorded } = await runJourney({
        agent: 'langgraph-agent.mjs',
        env: agentEnv(model, supplier, desk),
        worldFlags: ['--db', url, '--fs', desk],
        steps: [
          ['THINK', 'claude-fake-1'],
          // lookup_stock and get_price ran at once with the same SKU; lookup_stock only read rows.
          ['API_CALL', 'get_price'],
          ['THINK', 'claude-fake-1'],
          ['DB_QUERY', 'restock'],
          // forecast read rows and computed in a Worker, audit threw: neither is a step.
          ['THINK', 'claude-fake-1'],
          ['THINK', 'claude-fake-1'],
          ['FILE_WRITE', 'write_report'],
          ['FINALIZE', 'claude-fake-1'],
        ],
        prompt: PROMPT,
        wire: anthropicWire(model),
        model,
        weather: supplier,
        // The supplier's API is down for every replay: its one recorded answer is all there is.
        afterRecord: () => supplier.close(),
        finalLine:
          /^FINAL: FAKE final: lookup_stock=\{"sku":"W-1","qty":7\} \| get_price=.*\| audit=Error: audit service has no record of W-1/m,
        newPrompt: 'You are a terse stock desk.',
        patch: ['stock desk', 'careful stock desk'],
        world: () => world(desk),
        contract: CONTRACT,
        dir: tmp.dir,
      });
      // The real world holds the one run's changes, stamped with the values the recording holds.
      const log = await query<{ id: string; at: string }>('SELECT id, at FROM restock_log');
      expect(log).toHaveLength(1);
      const events = readFileSync(path.join(recorded.dir, 'events.jsonl'), 'utf8');
      expect(events).toContain(log[0]?.id);
      expect(events).toContain(log[0]?.at);
      expect(await query('SELECT qty FROM stock WHERE sku = $$W-1$$')).toEqual([{ qty: 12 }]);
      // The Worker's own clock and random draws are its process's, and came back in the exact replay.
      expect(recorded.agentStdout).toMatch(/forecast=\{"sku":"W-1","days":7,"demand":37,"at":\d+,"noise":0\.\d+\}/);
      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.runtime.sdkVersions).toMatchObject({
        '@langchain/langgraph': installedVersion('@langchain/langgraph'),
        '@langchain/anthropic': installedVersion('@langchain/anthropic'),
      });
      // The SDK that made the model calls, when npm nested it: @langchain/anthropic's own, not the repository's.
      if (existsSync(path.join(ROOT, 'node_modules/@langchain/anthropic/node_modules/@anthropic-ai/sdk')))
        expect(recording.manifest.runtime.sdkVersions['@anthropic-ai/sdk (in @langchain/anthropic)']).toBe(
          installedVersion('@langchain/anthropic/node_modules/@anthropic-ai/sdk'),
        );
      expect(supplier.hits()).toBe(1);
    });
  });

  // A MemorySaver thread kept in a file of the recorded folder: the second run resumes it. Its
  // exact replay reads the thread as it was when run 2 started (the recording's), not the file as
  // run 2 left it, and writes nothing real.
  it('resumes a checkpointed thread in a second recorded run, and replays that run from the thread it read', {
    timeout: 400_000,
  }, async () => {
    await onDesk('thread-desk', script([{ sku: 'W-1', qty: 5 }]), async ({ model, supplier, desk }) => {
      const env = agentEnv(model, supplier, desk, {
        THREAD_ID: 'desk-1',
        CHECKPOINT_FILE: path.join(desk, 'thread.json'),
      });
      const first = await recordDesk(desk, env, 'run1');
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.agentStdout).toContain('MESSAGES: 12');
      const second = await recordDesk(desk, env, 'run2', ['And W-2?']);
      expect(second.exitCode, second.stderr).toBe(0);
      // The thread's 12 messages, the new question and the answer.
      expect(second.agentStdout).toContain('MESSAGES: 14');
      const run2 = await readRecording(second.dir);
      expect(steps(run2).map(([, type, name]) => [type, name])).toEqual([
        ['FILE_READ', 'read_file'],
        ['FINALIZE', 'claude-fake-1'],
        ['FILE_WRITE', 'write_file'],
      ]);
      const calls = model.calls.length;
      const before = await world(desk);
      const thread = readFileSync(path.join(desk, 'thread.json'), 'utf8');
      await supplier.close();
      for (const isolation of ['auto', 'none']) {
        const exact = await replayJson(
          [
            second.dir,
            '--out',
            path.join(tmp.dir, `run2-${isolation}`),
            ...(isolation === 'none' ? ['--isolation', 'none'] : []),
          ],
          env,
        );
        expect(exact.divergences, exact.stderr).toEqual([]);
        expect(exact.served.live).toBe(0);
        expect(exact.stderr).toContain(second.agentStdout);
      }
      expect(model.calls.length).toBe(calls);
      expect(readFileSync(path.join(desk, 'thread.json'), 'utf8')).toBe(thread);
      expect(await world(desk)).toEqual(before);
    });
  });

  // The model restocks a SKU nobody mentioned (W-9: the tool throws, its transaction rolls back).
  // bisect finds that decision; a prompt that makes the model decide otherwise is replayed against
  // the live FAKE model (the run parts from the recording at that step, the sandbox takes the new
  // rows), and bisecting the replay says the divergence is gone. The real world is untouched.
  it('bisects an invented SKU to its step, and a prompt change that removes it, with the world untouched', {
    timeout: 400_000,
  }, async () => {
    await onDesk(
      'bulk-desk',
      (system) =>
        system.includes('bulk')
          ? script([{ sku: 'W-1', qty: 50 }], 'W-1: restocked 50 units')
          : script([
              { sku: 'W-9', qty: 2 },
              { sku: 'W-1', qty: 5 },
            ]),
      async ({ model, supplier, desk }) => {
        const env = agentEnv(model, supplier, desk);
        const recorded = await recordDesk(desk, env, 'invented');
        expect(recorded.exitCode, recorded.stderr).toBe(0);
        expect(recorded.agentStdout).toContain('restock=Error: unknown SKU W-9');
        // The rolled-back transaction left no row, in the world or in the recording.
        expect(await query('SELECT sku, qty FROM restock_log')).toEqual([{ sku: 'W-1', qty: 5 }]);
        const recording = await readRecording(recorded.dir);
        const changes = recording.events.filter((e) => e.type === 'db.changed');
        expect(changes.map((e) => e.type === 'db.changed' && [e.payload.table, e.payload.op])).toEqual([
          ['restock_log', 'insert'],
          ['stock', 'update'],
        ]);
        const found = await tapedeck(['bisect', recorded.dir]);
        expect(found.code, found.stderr).toBe(1);
        expect(found.stdout).toContain('first bad step: 3 (THINK claude-fake-1)');
        expect(found.stdout).toMatch(/\[grounding\].*W-9/);

        const before = await world(desk);
        await supplier.close();
        const promptFile = path.join(tmp.dir, 'bulk.txt');
        writeFileSync(promptFile, 'You are a bulk stock desk.');
        const changed = await replayJson(
          [
            recorded.dir,
            '--mode',
            'counterfactual',
            '--system-prompt',
            promptFile,
            '--out',
            path.join(tmp.dir, 'bulk'),
          ],
          env,
        );
        expect(changed.status, changed.stderr).toBe('complete');
        // The run parts at step 3 (the model restocks otherwise); the later requests are new, and each
        // says how it differs from the recorded run, not that its prompt is the new one.
        expect(changed.firstDivergentStep).toBe(3);
        expect(changed.divergences[0]).toMatchObject({ kind: 'different-request', step: 3 });
        expect(changed.divergences[0]?.message).toContain('the model decided differently from recorded step 3');
        for (const d of changed.divergences.slice(1))
          expect(d.fieldDiff?.filter((f) => f.path === 'body.system')).toEqual([]);
        expect(changed.stderr).toContain('restock={"sku":"W-1","qty":57');
        expect(await world(desk)).toEqual(before);
        const shift = await tapedeck(['bisect', changed.dir]);
        expect(shift.stdout).toContain('no bad step');
        expect(shift.stdout).toContain(
          'prompt change: disappeared — the divergence at baseline step 3 (THINK claude-fake-1) is gone',
        );
      },
    );
  });

  // LangGraph's PostgresSaver on the agent's own pool saves the thread after every node, into the
  // captured database: its rows hold every call's arguments so far, and are no evidence of any one
  // (a step of them alone is no tool's). The contract allows its tables as bookkeeping.
  it('records a run checkpointed to Postgres without taking the checkpointer for a tool, and replays it exactly', {
    timeout: 400_000,
  }, async () => {
    await onDesk('pg-desk', script([{ sku: 'W-1', qty: 5 }]), async ({ model, supplier, desk }) => {
      await query('DROP TABLE IF EXISTS checkpoints, checkpoint_blobs, checkpoint_writes, checkpoint_migrations');
      // Migrated before the run, as a deployed agent's database is.
      const pool = new pg.Pool({ connectionString: url });
      pool.on('error', () => {});
      await new PostgresSaver(pool).setup();
      await pool.end();
      const env = agentEnv(model, supplier, desk, { THREAD_ID: 'pg-1', CHECKPOINTER: 'postgres' });
      const recorded = await recordDesk(desk, env, 'pg-run');
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      const recording = await readRecording(recorded.dir);
      const tables = new Map<number, Set<string>>();
      for (const e of recording.events)
        if (e.type === 'db.changed') tables.set(e.stepId, (tables.get(e.stepId) ?? new Set()).add(e.payload.table));
      expect([...tables.values()].some((t) => t.has('checkpoints'))).toBe(true);
      const calls = new Set(
        recording.events.flatMap((e) => (e.type === 'tool.called' || e.type === 'http.exchange' ? [e.stepId] : [])),
      );
      const named = steps(recording);
      for (const [id, , name] of named) {
        const changed = [...(tables.get(id) ?? [])];
        // A step of checkpoint rows alone (no call of its own) is named after no tool call.
        if (!calls.has(id) && changed.length > 0 && changed.every((t) => t.startsWith('checkpoint')))
          expect(name).toBe('database changes');
        if (changed.includes('restock_log')) expect(name).toBe('restock');
      }
      expect(named.map(([, type, name]) => `${type} ${name}`)).toEqual(
        expect.arrayContaining(['API_CALL get_price', 'DB_QUERY restock', 'FILE_WRITE write_report']),
      );
      const contract = path.join(tmp.dir, 'pg-contract.yaml');
      writeFileSync(
        contract,
        CONTRACT.replace(
          '  side_effects: fail',
          '  allow: { tables: [public.checkpoints, public.checkpoint_blobs, public.checkpoint_writes, public.checkpoint_migrations] }\n  side_effects: fail',
        ),
      );
      const evaluated = await tapedeck(['eval', recorded.dir, '--contract', contract]);
      expect(evaluated.code, evaluated.stdout).toBe(0);
      expect(evaluated.stdout).toContain('1 execution(s) verified');

      await supplier.close();
      const before = await world(desk);
      const checkpoints = await query('SELECT count(*)::int AS n FROM checkpoints');
      const exact = await replayJson([recorded.dir, '--out', path.join(tmp.dir, 'pg-exact')], env);
      expect(exact.divergences, exact.stderr).toEqual([]);
      expect(exact.stderr).toContain(recorded.agentStdout);
      expect(await world(desk)).toEqual(before);
      expect(await query('SELECT count(*)::int AS n FROM checkpoints')).toEqual(checkpoints);
    });
  });
});
