// Test helpers for the recorder: real HTTP servers on 127.0.0.1 and a small FAKE model server
// (OpenAI Chat Completions and Responses, streaming and not) — the only fake allowed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

export async function startServer(
  handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse, raw: Buffer) => void | Promise<void>,
): Promise<TestServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      Promise.resolve(handler(req, raw.toString('utf8'), res, raw)).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Records `node agent` into `out` (stdout piped): its exit code and what it printed. */
export async function recordAgent(agent: string, out: string, env: Record<string, string> = {}) {
  // Loaded here: most users of these helpers never record.
  const { recordCommand } = await import('../../src/record/index.js');
  let stdout = '';
  const recorded = await recordCommand({
    command: [process.execPath, agent],
    env,
    out,
    stdio: 'pipe',
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
  });
  return { exitCode: recorded.exitCode, stdout };
}

/**
 * Replays `recording` exactly into `out` at an isolation level, the agent's output piped (the
 * replay of a recordAgent() recording, as most replay tests make it).
 */
export async function replayExact(
  recording: string,
  out: string,
  isolation: 'bwrap' | 'none',
  env: Record<string, string> = {},
) {
  const { replay } = await import('../../src/replay/index.js');
  return replay({ recording, mode: 'exact', out, stdio: 'pipe', isolation, env, timeoutMs: 120_000 });
}

export function tempDir(prefix = 'tapedeck-record-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The FAKE model's usage for a call: fixed numbers per call index, with cached and reasoning tokens. */
export function fakeUsage(call: number) {
  return {
    prompt_tokens: 100 + call * 10,
    completion_tokens: 20 + call,
    total_tokens: 120 + call * 11,
    prompt_tokens_details: { cached_tokens: 30 + call },
    completion_tokens_details: { reasoning_tokens: 5 },
  };
}

/**
 * A FAKE OpenAI-compatible model server. The reply to a chat completion is a tool call
 * `lookup` while the conversation has fewer tool results than `toolTurns`, then a final text.
 * `hangOnCall` makes that call's stream send one chunk and then never finish.
 */
export async function startFakeModel(options: { toolTurns?: number; hangOnCall?: number } = {}) {
  let calls = 0;
  const log: Array<{ path: string; stream: boolean; usage: unknown }> = [];
  const server = await startServer(async (req, body, res) => {
    const json = JSON.parse(body || '{}') as Record<string, unknown>;
    const call = ++calls;
    const stream = json.stream === true;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const usage = fakeUsage(call);
    log.push({ path, stream, usage });
    if (path.endsWith('/responses')) {
      const responsesUsage = {
        input_tokens: usage.prompt_tokens,
        input_tokens_details: usage.prompt_tokens_details,
        output_tokens: usage.completion_tokens,
        output_tokens_details: usage.completion_tokens_details,
        total_tokens: usage.total_tokens,
      };
      log[log.length - 1]!.usage = responsesUsage;
      const response = {
        id: `resp_${call}`,
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: 'fake-responses-1',
        output: [
          {
            id: `msg_${call}`,
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: `answer ${call}`, annotations: [] }],
          },
        ],
        usage: responsesUsage,
      };
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = [
        { type: 'response.created', response: { ...response, status: 'in_progress', output: [], usage: null } },
        {
          type: 'response.output_text.delta',
          item_id: `msg_${call}`,
          output_index: 0,
          content_index: 0,
          delta: 'answer ',
        },
        {
          type: 'response.output_text.delta',
          item_id: `msg_${call}`,
          output_index: 0,
          content_index: 0,
          delta: `${call}`,
        },
        { type: 'response.completed', response },
      ];
      for (const [i, event] of events.entries()) {
        res.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`);
        await new Promise((r) => setTimeout(r, 2));
      }
      res.end();
      return;
    }
    const messages = (json.messages as Array<{ role: string }>) ?? [];
    const toolResults = messages.filter((m) => m.role === 'tool').length;
    const wantsTool = toolResults < (options.toolTurns ?? 1);
    const message = wantsTool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: `call_${call}`, type: 'function', function: { name: 'lookup', arguments: `{"n":${call}}` } },
          ],
        }
      : { role: 'assistant', content: `final answer after ${toolResults} tools` };
    const finish = wantsTool ? 'tool_calls' : 'stop';
    const base = { id: `chatcmpl-${call}`, created: 1, model: 'fake-chat-1' };
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: unknown, finishReason: string | null, extra: object = {}) =>
      `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }, null));
    if (options.hangOnCall === call) return; // never finishes
    if (wantsTool) {
      const tc = message.tool_calls![0]!;
      res.write(
        chunk(
          { tool_calls: [{ index: 0, id: tc.id, type: 'function', function: { name: 'lookup', arguments: '' } }] },
          null,
        ),
      );
      await new Promise((r) => setTimeout(r, 2));
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: tc.function.arguments } }] }, null));
    } else {
      for (const word of String(message.content).split(/(?= )/)) {
        res.write(chunk({ content: word }, null));
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    res.write(chunk({}, finish));
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  return { ...server, log, calls: () => calls };
}

/**
 * A NODE_OPTIONS `--import` that lists every module a process (and its node children) loads: ES
 * modules through a loader hook, CommonJS through Module._load, written through a descriptor
 * opened before any preload patches node:fs. `loaded()` reads the list (URLs, and `require:` paths).
 */
export function moduleLog(dir: string, name: string): { nodeOptions: string; loaded(): string[] } {
  const log = path.join(dir, `${name}.modules.log`);
  const hooks = path.join(dir, `${name}-hooks.mjs`);
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}`,
  );
  const register = path.join(dir, `${name}-register.mjs`);
  writeFileSync(
    register,
    `import { openSync, writeSync } from 'node:fs';
import Module, { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const fd = openSync(${JSON.stringify(log)}, 'a');
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.call(this, request, parent, isMain);
  try { writeSync(fd, 'require:' + Module._resolveFilename(request, parent, isMain) + '\\n'); } catch {}
  return loaded;
};
`,
  );
  writeFileSync(log, '');
  return {
    nodeOptions: `--import=${register}`,
    loaded: () => readFileSync(log, 'utf8').trim().split('\n'),
  };
}

/** A database of its own on the server at `adminUrl`, made from `sql`; drop() removes it. */
export async function scratchDatabase(
  adminUrl: string,
  prefix: string,
  sql: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const name = `${prefix}${Math.random().toString(16).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  try {
    await setup.query(sql);
  } finally {
    await setup.end();
  }
  return {
    url,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
