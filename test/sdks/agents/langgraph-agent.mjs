// A stock desk on LangGraph.js (`@langchain/langgraph` StateGraph: a model node, a ToolNode, and a
// loop back to the model until it stops calling tools) with `@langchain/anthropic` ChatAnthropic,
// streaming, unchanged by tapedeck. Its tools touch a real world:
//   lookup_stock  SELECT through drizzle-orm over a pg Pool
//   get_price     GET the supplier API with axios
//   restock       a drizzle transaction: UPDATE … RETURNING, INSERT a log row stamped with
//                 crypto.randomUUID() and Date.now(), RETURNING its id
//   forecast      computed in a worker_threads Worker
//   write_report  fs/promises writeFile of a report file
//   audit         always throws (the graph hands the error back to the model as a tool result)
// Env: ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, DATABASE_URL, SUPPLIER_URL, REPORT_DIR, SYSTEM_PROMPT;
// THREAD_ID with CHECKPOINT_FILE: a MemorySaver checkpointer whose saved thread is loaded from and
// written back to that file, so a second run resumes the thread; THREAD_ID with
// CHECKPOINTER=postgres: LangGraph's PostgresSaver on the agent's pool. Prints `FINAL: <text>`.
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import axios from 'axios';
import { eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { bigint, integer, pgTable, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { z } from 'zod';

const stock = pgTable('stock', { sku: text('sku').primaryKey(), qty: integer('qty').notNull() });
const restockLog = pgTable('restock_log', {
  id: text('id').primaryKey(),
  sku: text('sku').notNull(),
  qty: integer('qty').notNull(),
  at: bigint('at', { mode: 'number' }).notNull(),
});

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 3 });
const db = drizzle(pool);

const lookupStock = tool(
  async ({ sku }) => {
    const rows = await db.select().from(stock).where(eq(stock.sku, sku));
    return JSON.stringify(rows[0] ?? { sku, qty: 0 });
  },
  { name: 'lookup_stock', description: 'Units in stock for a SKU.', schema: z.object({ sku: z.string() }) },
);

const getPrice = tool(
  async ({ sku }) => {
    const res = await axios.get(`${process.env.SUPPLIER_URL}/price`, { params: { sku } });
    return JSON.stringify(res.data);
  },
  { name: 'get_price', description: "The supplier's unit price for a SKU.", schema: z.object({ sku: z.string() }) },
);

const restock = tool(
  async ({ sku, qty }) => {
    // The log row first, then the stock: an unknown SKU throws after the INSERT, and the
    // transaction rolls the row back.
    const result = await db.transaction(async (tx) => {
      const [logged] = await tx
        .insert(restockLog)
        .values({ id: randomUUID(), sku, qty, at: Date.now() })
        .returning({ id: restockLog.id, at: restockLog.at });
      const [row] = await tx
        .update(stock)
        .set({ qty: sql`${stock.qty} + ${qty}` })
        .where(eq(stock.sku, sku))
        .returning();
      if (row === undefined) throw new Error(`unknown SKU ${sku}`);
      return { sku, qty: row.qty, logId: logged?.id, at: logged?.at };
    });
    return JSON.stringify(result);
  },
  {
    name: 'restock',
    description: 'Order units of a SKU and add them to stock.',
    schema: z.object({ sku: z.string(), qty: z.number().int() }),
  },
);

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
let demand = 0;
for (let d = 1; d <= workerData.days; d++) demand += Math.round(workerData.qty / 4 + d / 2);
parentPort.postMessage({ sku: workerData.sku, days: workerData.days, demand, at: Date.now(), noise: Math.random() });
`;
const forecast = tool(
  async ({ sku, days }) => {
    const [row] = await db.select().from(stock).where(eq(stock.sku, sku));
    const out = await new Promise((resolve, reject) => {
      const worker = new Worker(WORKER, { eval: true, workerData: { sku, days, qty: row?.qty ?? 0 } });
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return JSON.stringify(out);
  },
  {
    name: 'forecast',
    description: 'Forecast the demand for a SKU over some days.',
    schema: z.object({ sku: z.string(), days: z.number().int() }),
  },
);

const writeReport = tool(
  async ({ text: body }) => {
    const file = path.join(process.env.REPORT_DIR ?? '.', 'report.md');
    await writeFile(file, `${body}\n`);
    return JSON.stringify({ written: 'report.md', bytes: Buffer.byteLength(`${body}\n`) });
  },
  { name: 'write_report', description: 'Write the stock report.', schema: z.object({ text: z.string() }) },
);

const audit = tool(
  async ({ sku }) => {
    throw new Error(`audit service has no record of ${sku}`);
  },
  { name: 'audit', description: 'Audit the stock history of a SKU.', schema: z.object({ sku: z.string() }) },
);

const tools = [lookupStock, getPrice, restock, forecast, writeReport, audit];
const model = new ChatAnthropic({
  model: 'claude-fake-1',
  apiKey: process.env.ANTHROPIC_API_KEY,
  anthropicApiUrl: process.env.ANTHROPIC_BASE_URL,
  streaming: true,
  maxTokens: 1024,
  maxRetries: 0,
}).bindTools(tools);

const PROMPT =
  process.env.SYSTEM_PROMPT ??
  'You are a stock desk. Check stock and price, restock, forecast, audit, write the report, then answer.';

const graph = new StateGraph(MessagesAnnotation)
  .addNode('model', async (state) => ({
    messages: [await model.invoke([new SystemMessage(PROMPT), ...state.messages])],
  }))
  .addNode('tools', new ToolNode(tools, { handleToolErrors: true }))
  .addEdge(START, 'model')
  .addConditionalEdges('model', (state) => (state.messages.at(-1)?.tool_calls?.length ? 'tools' : END))
  .addEdge('tools', 'model');

const threadId = process.env.THREAD_ID;
const checkpointFile = process.env.CHECKPOINT_FILE;
// MemorySaver keeps its checkpoints in two plain objects of Uint8Arrays: saved to a file and loaded
// back, the thread goes on in the next run.
const toJson = (v) =>
  v instanceof Uint8Array
    ? { b64: Buffer.from(v).toString('base64') }
    : Array.isArray(v)
      ? v.map(toJson)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJson(x)]))
        : v;
const fromJson = (v) =>
  v && typeof v === 'object'
    ? typeof v.b64 === 'string'
      ? new Uint8Array(Buffer.from(v.b64, 'base64'))
      : Array.isArray(v)
        ? v.map(fromJson)
        : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromJson(x)]))
    : v;
let checkpointer;
if (threadId && process.env.CHECKPOINTER === 'postgres') {
  // LangGraph's Postgres checkpointer on the agent's own pool: its tables are bookkeeping.
  const { PostgresSaver } = await import('@langchain/langgraph-checkpoint-postgres');
  checkpointer = new PostgresSaver(pool);
  await checkpointer.setup();
} else if (threadId && checkpointFile) {
  checkpointer = new MemorySaver();
  const saved = await readFile(checkpointFile, 'utf8').catch(() => undefined);
  if (saved) Object.assign(checkpointer, fromJson(JSON.parse(saved)));
}
const app = graph.compile(checkpointer ? { checkpointer } : {});

const question = process.argv[2] ?? 'Restock widget W-1 and write the stock report.';
const result = await app.invoke(
  { messages: [new HumanMessage(question)] },
  { recursionLimit: 20, ...(threadId ? { configurable: { thread_id: threadId } } : {}) },
);
const last = result.messages.at(-1);
process.stdout.write(`FINAL: ${last.text}\n`);
process.stdout.write(`MESSAGES: ${result.messages.length}\n`);

if (checkpointer && checkpointFile) {
  const { storage, writes } = checkpointer;
  await writeFile(checkpointFile, JSON.stringify({ storage: toJson(storage), writes: toJson(writes) }));
}
await pool.end();
