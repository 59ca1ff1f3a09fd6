// OpenTelemetry GenAI interop. Import: an agent traced with the real OpenTelemetry JS SDK (OTLP/HTTP
// exporter, GenAI attributes, message content captured) becomes a recording whose model calls and
// tool results replay the unchanged agent exactly, with the model server gone. Export: a recording
// as OTLP/JSON in the format the SDK's exporter sends, with the current gen_ai.* attributes, to a
// file or a collector, and back.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attributesOf, type OtlpTraces, TracesSchema } from '../../src/interop/otlp-schema.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { example, root, tapedeck } from '../cli/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-otlp-'));
const AGENT = join(root, 'test/interop/fixtures/otel-agent.mjs');
const ANSWER = 'Yes, take an umbrella: rain and 12°C in Paris today.';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/** A scripted OpenAI chat completions server: first a get_weather call, then the answer. */
function modelServer(): Server {
  let n = 0;
  return createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const request = JSON.parse(body) as { messages: Array<{ role: string }> };
      const done = request.messages.at(-1)?.role === 'tool';
      n++;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: `chatcmpl-${n}`,
          object: 'chat.completion',
          created: 1_790_000_000 + n,
          model: 'gpt-4.1-mini-2025-04-14',
          choices: [
            {
              index: 0,
              message: done
                ? { role: 'assistant', content: ANSWER, refusal: null }
                : {
                    role: 'assistant',
                    content: null,
                    refusal: null,
                    tool_calls: [
                      {
                        id: `call_${n}`,
                        type: 'function',
                        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                      },
                    ],
                  },
              finish_reason: done ? 'stop' : 'tool_calls',
              logprobs: null,
            },
          ],
          usage: {
            prompt_tokens: 90 + n,
            completion_tokens: 12,
            total_tokens: 102 + n,
            prompt_tokens_details: { cached_tokens: done ? 64 : 0 },
            completion_tokens_details: { reasoning_tokens: 0 },
          },
        }),
      );
    });
  });
}

/** An OTLP/HTTP receiver: keeps the JSON bodies POSTed to /v1/traces. */
function collector(): { server: Server; received: OtlpTraces[] } {
  const received: OtlpTraces[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) received.push(JSON.parse(body));
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  return { server, received };
}

function runAgent(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [AGENT],
      { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const spansOf = (t: OtlpTraces) => t.resourceSpans.flatMap((r) => (r.scopeSpans ?? []).flatMap((s) => s.spans ?? []));

describe.each(['semconv', 'openllmetry'])(
  'import of spans the OpenTelemetry JS SDK exported (%s attributes)',
  (style) => {
    let traces: OtlpTraces;
    let file: string;
    beforeAll(async () => {
      const model = modelServer();
      const otel = collector();
      const [modelUrl, otelUrl] = await Promise.all([listen(model), listen(otel.server)]);
      try {
        const run = await runAgent({
          OPENAI_BASE_URL: `${modelUrl}/v1`,
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otelUrl}/v1/traces`,
          TRACE_STYLE: style,
        });
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout.trim()).toBe(ANSWER);
      } finally {
        model.closeAllConnections();
        model.close();
        otel.server.close();
      }
      traces = { resourceSpans: otel.received.flatMap((r) => r.resourceSpans) };
      file = join(tmp, `${style}.otlp.json`);
      writeFileSync(file, JSON.stringify(traces));
    });

    it('the SDK exporter’s body is OTLP/JSON as the importer reads it', () => {
      expect(TracesSchema.safeParse(traces).success).toBe(true);
      expect(
        spansOf(traces).filter((s) => attributesOf(s.attributes)['gen_ai.operation.name'] === 'chat'),
      ).toHaveLength(2);
    });

    it('gives a recording whose model calls and tool results replay the unchanged agent exactly, the model server gone', async () => {
      const out = join(tmp, `imported-${style}`);
      const imported = await tapedeck(['import', '--otlp', file, '--out', out, '--json']);
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({
        modelCalls: 2,
        toolCalls: 1,
        derivedToolCalls: style === 'openllmetry' ? 1 : 0,
      });
      const recording = await readRecording(out);
      // Its command came from the trace, not from this machine: never sealed, so never run unasked.
      expect(recording.manifest.seal).toBeUndefined();
      const calls = recording.events.filter((e) => e.type === 'model.called').map((e) => e.payload);
      expect(calls.map((c) => c.output.toolCalls.map((t) => t.name))).toEqual([['get_weather'], []]);
      expect(calls[1]?.output.text).toBe(ANSWER);
      expect(calls[1]?.usage).toMatchObject({ cacheRead: 64, inputUncached: 92 - 64 + 0 * 1 });
      const result = await replay({
        recording: out,
        mode: 'exact',
        command: [process.execPath, AGENT],
        env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
        stdio: 'pipe',
        out: join(tmp, `replay-${style}`),
      });
      expect(result.divergences).toEqual([]);
      expect(result.output?.stdout.trim()).toBe(ANSWER);
      expect(result.served).toMatchObject({ recording: 3, live: 0, blocked: 0 });
    });

    it('a changed agent is a divergence, not a silent answer', async () => {
      const result = await replay({
        recording: join(tmp, `imported-${style}`),
        mode: 'exact',
        command: [process.execPath, AGENT],
        env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
        stdio: 'pipe',
        out: join(tmp, `replay-changed-${style}`),
        systemPrompt: 'You are a different assistant.',
      });
      expect(result.divergences.length).toBeGreaterThan(0);
    });
  },
);

describe('export of a recording as OTLP/JSON GenAI spans', () => {
  let sdkSpanKeys: Set<string>;
  beforeAll(() => {
    const sdk = JSON.parse(readFileSync(join(tmp, 'semconv.otlp.json'), 'utf8')) as OtlpTraces;
    sdkSpanKeys = new Set(spansOf(sdk).flatMap((s) => Object.keys(s)));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('writes the format the SDK exporter sends, with the current gen_ai.* attributes', async () => {
    const file = join(tmp, 'export.json');
    const run = await tapedeck(['export', example('anthropic-fixed'), '--otlp', '--out', file]);
    expect(run.code, run.stderr).toBe(0);
    const traces = TracesSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    const spans = spansOf(traces);
    for (const s of spans) {
      for (const key of Object.keys(s)) expect(sdkSpanKeys, `span field ${key}`).toContain(key);
      expect(s.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(typeof s.startTimeUnixNano).toBe('string');
    }
    const chats = spans.map((s) => attributesOf(s.attributes)).filter((a) => a['gen_ai.operation.name'] === 'chat');
    const recording = await readRecording(example('anthropic-fixed'));
    const calls = recording.events.filter((e) => e.type === 'model.called').map((e) => e.payload);
    expect(chats).toHaveLength(calls.length);
    for (const [i, a] of chats.entries()) {
      const u = calls[i]?.usage;
      expect(a).toMatchObject({
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': calls[i]?.model,
        'gen_ai.usage.input_tokens': (u?.inputUncached ?? 0) + (u?.cacheRead ?? 0) + (u?.cacheWrite ?? 0),
        'gen_ai.usage.cache_read.input_tokens': u?.cacheRead,
        'gen_ai.usage.cache_creation.input_tokens': u?.cacheWrite,
        'gen_ai.usage.output_tokens': (u?.output ?? 0) + (u?.reasoning ?? 0),
        'gen_ai.usage.reasoning.output_tokens': u?.reasoning,
      });
      expect(Array.isArray(JSON.parse(String(a['gen_ai.input.messages'])))).toBe(true);
      const output = JSON.parse(String(a['gen_ai.output.messages'])) as Array<{
        parts: Array<{ type: string; name?: string }>;
      }>;
      expect(output[0]?.parts.filter((p) => p.type === 'tool_call').map((p) => p.name)).toEqual(
        calls[i]?.output.toolCalls.map((t) => t.name),
      );
    }
    const tools = spans
      .map((s) => attributesOf(s.attributes))
      .filter((a) => a['gen_ai.operation.name'] === 'execute_tool');
    expect(tools.length).toBeGreaterThan(0);
    expect(
      tools.every(
        (a) => typeof a['gen_ai.tool.name'] === 'string' && typeof a['gen_ai.tool.call.arguments'] === 'string',
      ),
    ).toBe(true);
  });

  it('sends them to a collector, and what the collector got imports back to the same model calls', async () => {
    const otel = collector();
    const url = await listen(otel.server);
    try {
      const run = await tapedeck(['export', example('openai-baseline'), '--otlp-endpoint', url]);
      expect(run.code, run.stderr).toBe(0);
    } finally {
      otel.server.close();
    }
    expect(otel.received).toHaveLength(1);
    const file = join(tmp, 'received.json');
    writeFileSync(file, JSON.stringify(otel.received[0]));
    const out = join(tmp, 'roundtrip');
    expect((await tapedeck(['import', '--otlp', file, '--out', out])).code).toBe(0);
    const [a, b] = await Promise.all([readRecording(example('openai-baseline')), readRecording(out)]);
    const calls = (r: typeof a) =>
      r.events
        .filter((e) => e.type === 'model.called')
        .map((e) => ({
          model: e.payload.model,
          system: e.payload.system,
          output: e.payload.output,
          usage: e.payload.usage,
        }));
    expect(calls(b)).toEqual(calls(a));
  });

  it('a file that is not OTLP is refused with the field that is wrong', async () => {
    const file = join(tmp, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: 'xyz',
                    spanId: '0102030405060708',
                    name: 'x',
                    startTimeUnixNano: '1',
                    endTimeUnixNano: '2',
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    const run = await tapedeck(['import', '--otlp', file, '--out', join(tmp, 'bad-out')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /bad\.json: field resourceSpans\.0\.scopeSpans\.0\.spans\.0\.traceId: expected a 16-byte id/,
    );
  });
});
