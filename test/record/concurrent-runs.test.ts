// Concurrent in-process runs: record() called 24 times at once, each run making model calls
// (real openai SDK, streamed and not), HTTP tool calls (global fetch, node:http and the npm undici
// package), tool() calls and clock/random/uuid draws
// interleaved with the others — every recording holds exactly its own run's calls and values.
// Work outside any run is not recorded, and with no run active the process sees its own
// Date, Math.random, fetch, dispatcher and diagnostics channels.
import dc from 'node:diagnostics_channel';
import http from 'node:http';
import Module from 'node:module';
import OpenAI from 'openai';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeRuns, record, tool } from '../../src/record/index.js';
import {
  bodyText,
  type HttpExchangePayload,
  type ModelCalledPayload,
  type NondeterminismPayload,
  readRecording,
  type ToolCalledPayload,
} from '../../src/recording/index.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

let model: TestServer;
let api: TestServer;
const tmp = tempDir();
const outside: string[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // A FAKE model that echoes the last user message, after a delay that varies per request.
  model = await startServer(async (_req, body, res) => {
    const json = JSON.parse(body) as { messages: Array<{ content: string }>; stream?: boolean };
    const last = json.messages.at(-1)?.content ?? '';
    await sleep(Number(/delay=(\d+)/.exec(last)?.[1] ?? 0));
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const base = { id: 'chatcmpl-1', created: 1, model: 'echo-1' };
    if (json.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: `echo ${last}` }, finish_reason: 'stop' }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const part of ['echo ', last]) {
      const chunk = { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: part } }] };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      await sleep(3);
    }
    res.end('data: [DONE]\n\n');
  });
  api = await startServer(async (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    await sleep(Number(url.searchParams.get('delay') ?? 0));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ session: url.searchParams.get('session'), ok: true }));
  });
});
afterAll(async () => {
  await model.close();
  await api.close();
  tmp.remove();
});

interface Seen {
  clock: number[];
  random: number[];
  uuid: string[];
}

/** One session's agent: model call, HTTP tool call over node:http and fetch, a tool(), values. */
async function session(n: number, seen: Seen): Promise<string> {
  const client = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: `sk-test-session-key-${n}-abcdefgh`, maxRetries: 0 });
  const delay = (n * 7) % 23;
  seen.clock.push(Date.now());
  const first = await client.chat.completions.create({
    model: 'echo-1',
    messages: [{ role: 'user', content: `session ${n} delay=${delay}` }],
  });
  seen.random.push(Math.random());
  const viaFetch = await fetch(`${api.url}/lookup?session=${n}&delay=${23 - delay}`).then((r) => r.json());
  const viaHttp = await new Promise<string>((resolve, reject) => {
    http
      .get(`${api.url}/lookup?session=${n}&via=http`, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
  // The npm undici package, loaded before any run (as a server loads its modules).
  const viaUndici = await undiciRequest(`${api.url}/lookup?session=${n}&via=undici`).then((r) => r.body.json());
  seen.uuid.push(crypto.randomUUID());
  const add = tool('add', async (a: number, b: number) => {
    await sleep(delay);
    return a + b;
  });
  const sum = await add(n, 1000);
  // biome-ignore lint/complexity/useDateNow: the Date constructor's clock read is one of the values under test
  seen.clock.push(new Date().getTime());
  const stream = await client.chat.completions.create({
    model: 'echo-1',
    stream: true,
    messages: [{ role: 'user', content: `again ${n} sum=${sum}` }],
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return `${first.choices[0]?.message.content}|${JSON.stringify(viaFetch)}|${viaHttp}|${JSON.stringify(viaUndici)}|${text}`;
}

describe('concurrent record() runs', () => {
  it('keeps each of 24 overlapping runs to its own calls, tool calls and values', async () => {
    const original = { Date, random: Math.random, fetch: globalThis.fetch };
    // Work started outside any run keeps going while the runs are recorded.
    let stop = false;
    const background = (async () => {
      while (!stop) {
        const answer = await fetch(`${api.url}/lookup?session=outside`).then((r) => r.json());
        outside.push(`${answer.session}:${Date.now()}:${Math.random()}`);
        await sleep(5);
      }
    })();
    const seen = Array.from({ length: 24 }, (): Seen => ({ clock: [], random: [], uuid: [] }));
    const runs = await Promise.all(
      seen.map((s, n) => record({ out: `${tmp.dir}/run-${n}`, name: `session-${n}` }, () => session(n, s))),
    );
    stop = true;
    await background;
    expect(outside.length).toBeGreaterThan(0);
    expect(activeRuns()).toBe(0);
    expect(Date).toBe(original.Date);
    expect(Math.random).toBe(original.random);
    expect(globalThis.fetch).toBe(original.fetch);

    for (const [n, run] of runs.entries()) {
      expect(run.recorded).toBe(true);
      expect(run.result).toContain(`echo session ${n} delay=`);
      const recording = await readRecording(run.dir);
      expect(recording.manifest.status).toBe('complete');
      const models = recording.events
        .filter((e) => e.type === 'model.called')
        .map((e) => e.payload as ModelCalledPayload);
      expect(models.map((m) => m.output.text)).toEqual([
        `echo session ${n} delay=${(n * 7) % 23}`,
        `echo again ${n} sum=${n + 1000}`,
      ]);
      const exchanges = recording.events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => e.payload as HttpExchangePayload);
      // Two model calls and three API calls, all of this session; nothing from outside the runs.
      expect(exchanges).toHaveLength(5);
      for (const x of exchanges) {
        const url = new URL(x.request.url);
        if (url.pathname === '/lookup') {
          expect(url.searchParams.get('session')).toBe(String(n));
          expect(JSON.parse(bodyText(recording, x.response?.body)).session).toBe(String(n));
        } else expect(bodyText(recording, x.request.body)).toContain(` ${n} `);
        expect(JSON.stringify(x.request.headers)).not.toContain(`sk-test-session-key-${n}`);
      }
      const tools = recording.events.filter((e) => e.type === 'tool.called').map((e) => e.payload as ToolCalledPayload);
      expect(tools.filter((t) => t.kind === 'in-process')).toEqual([
        expect.objectContaining({ name: 'add', args: [n, 1000], result: n + 1000 }),
      ]);
      // Exactly the values this session's agent drew, in its order (its SDK's own draws aside).
      const values = (kind: string) =>
        recording.events
          .filter((e) => e.type === 'nondeterminism' && (e.payload as NondeterminismPayload).kind === kind)
          .flatMap((e) => (e.payload as NondeterminismPayload).values);
      const s = seen[n]!;
      expect(values('uuid')).toEqual(s.uuid);
      expect(values('clock')).toEqual(expect.arrayContaining(s.clock));
      expect(values('random')).toEqual(expect.arrayContaining(s.random));
      for (const other of seen) if (other !== s) expect(values('uuid')).not.toContain(other.uuid[0]);
    }
    // The background loop's values were drawn while runs were active, and recorded by none
    // (random values: two clock reads may share a millisecond).
    const recorded = new Set<number | string>();
    for (const run of runs) {
      const recording = await readRecording(run.dir);
      for (const e of recording.events) {
        if (e.type === 'nondeterminism') for (const v of (e.payload as NondeterminismPayload).values) recorded.add(v);
      }
    }
    for (const line of outside) {
      const random = Number(line.split(':')[2]);
      expect(recorded.has(random)).toBe(false);
    }
  });

  it('leaves the process as it was when no run is active', async () => {
    const before = {
      Date,
      now: Date.now,
      random: Math.random,
      uuid: crypto.randomUUID,
      fetch: globalThis.fetch,
      dispatcher: (globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')],
      write: Object.hasOwn(http.ClientRequest.prototype, 'write'),
      load: (Module as unknown as { _load: unknown })._load,
    };
    await record({ out: `${tmp.dir}/single` }, async () => {
      expect(Date).not.toBe(before.Date);
      await fetch(`${api.url}/lookup?session=single`).then((r) => r.text());
    });
    expect(Date).toBe(before.Date);
    expect(Date.now).toBe(before.now);
    expect(Math.random).toBe(before.random);
    expect(crypto.randomUUID).toBe(before.uuid);
    expect(globalThis.fetch).toBe(before.fetch);
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')]).toBe(before.dispatcher);
    expect(Object.hasOwn(http.ClientRequest.prototype, 'write')).toBe(before.write);
    expect((Module as unknown as { _load: unknown })._load).toBe(before.load);
    expect(dc.hasSubscribers('http.client.request.start')).toBe(false);
    expect(dc.hasSubscribers('http.client.response.finish')).toBe(false);
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('tapedeck.recorder')]).toBeUndefined();
  });

  it('refuses a whole-world run while others are recorded, and the reverse', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const running = record({ out: `${tmp.dir}/held` }, () => held);
    await sleep(20);
    await expect(record({ out: `${tmp.dir}/exclusive`, fsRoot: tmp.dir }, async () => 1)).rejects.toMatchObject({
      code: 'RECORD_BUSY',
    });
    release();
    await running;
  });
});
