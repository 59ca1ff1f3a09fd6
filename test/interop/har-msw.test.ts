// HAR and msw interop. A HAR export imported back keeps every HTTP exchange (requests, responses,
// streamed chunks, timings) and decodes the model calls as the recorder did. msw handlers exported
// from a recording answer that recording's calls — through the real openai SDK and fetch — with
// every server stopped.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setupServer } from 'msw/node';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { bodyBytes, type HttpExchangePayload, type Recording, readRecording } from '../../src/recording/index.js';
import { example, tapedeck } from '../cli/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-har-msw-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const EXAMPLES = [
  'openai-baseline',
  'openai-baseline-stream',
  'anthropic-baseline-stream',
  'anthropic-fixed',
  'openai-fixed-stream',
];

function exchanges(r: Recording) {
  return r.events
    .filter((e) => e.type === 'http.exchange')
    .map((e) => {
      const x = e.payload as HttpExchangePayload;
      return {
        step: e.stepId,
        exchangeId: x.exchangeId,
        method: x.request.method,
        url: x.request.url,
        requestHeaders: x.request.headers,
        requestBody: bodyBytes(r, x.request.body).toString('base64'),
        status: x.response?.status,
        statusText: x.response?.statusText,
        responseHeaders: x.response?.headers,
        responseBody: bodyBytes(r, x.response?.body).toString('base64'),
        chunks: x.response?.chunks,
        startedAt: x.startedAt,
        durationMs: x.durationMs,
        ttfbMs: x.ttfbMs,
        error: x.error,
      };
    });
}

describe('HAR round trip', () => {
  it.each(EXAMPLES)(
    '%s: export --har, import --har keeps every exchange and decodes the same model calls',
    async (name) => {
      const har = join(tmp, `${name}.har`);
      const out = join(tmp, `${name}-from-har`);
      const exported = await tapedeck(['export', example(name), '--har', '--out', har]);
      expect(exported.code, exported.stderr).toBe(0);
      const imported = await tapedeck(['import', '--har', har, '--out', out, '--json']);
      expect(imported.code, imported.stderr).toBe(0);
      const [a, b] = await Promise.all([readRecording(example(name)), readRecording(out)]);
      const strip = (xs: ReturnType<typeof exchanges>) => xs.map(({ step: _s, ...x }) => x);
      expect(strip(exchanges(b))).toEqual(strip(exchanges(a)));
      const calls = (r: Recording) =>
        r.events.filter((e) => e.type === 'model.called').map(({ payload: { latencyMs: _l, ttftMs: _t, ...m } }) => m);
      expect(calls(b)).toEqual(calls(a));
      expect(JSON.parse(imported.stdout)).toMatchObject({
        exchanges: exchanges(a).length,
        modelCalls: calls(a).length,
      });
    },
  );

  it('imports a HAR another tool wrote (no tapedeck fields), and refuses one that is not HAR', async () => {
    const har = join(tmp, 'browser.har');
    writeFileSync(
      har,
      JSON.stringify({
        log: {
          version: '1.2',
          creator: { name: 'Firefox', version: '130' },
          entries: [
            {
              startedDateTime: '2026-11-24T10:00:00.000Z',
              time: 42,
              request: {
                method: 'GET',
                url: 'https://api.example.com/flights?to=DEN',
                httpVersion: 'HTTP/2',
                headers: [{ name: 'Accept', value: 'application/json' }],
                queryString: [],
                cookies: [],
                headersSize: -1,
                bodySize: 0,
              },
              response: {
                status: 200,
                statusText: 'OK',
                httpVersion: 'HTTP/2',
                headers: [{ name: 'Content-Type', value: 'application/json' }],
                cookies: [],
                content: { size: 13, mimeType: 'application/json', text: '{"flights":[]}' },
                redirectURL: '',
                headersSize: -1,
                bodySize: 13,
              },
              cache: {},
              timings: { send: 1, wait: 30, receive: 11 },
            },
          ],
        },
      }),
    );
    const out = join(tmp, 'from-browser');
    expect((await tapedeck(['import', '--har', har, '--out', out])).code).toBe(0);
    const r = await readRecording(out);
    const tool = r.events.find((e) => e.type === 'tool.called')?.payload as { name: string; result: unknown };
    expect(tool).toMatchObject({ name: 'GET /flights', result: { flights: [] } });
    writeFileSync(join(tmp, 'not.har'), '{"log": {"entries": [{"request": 1}]}}');
    const bad = await tapedeck(['import', '--har', join(tmp, 'not.har'), '--out', join(tmp, 'nope')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not\.har: field log\.entries\.0\./);
  });
});

describe('msw handlers exported from a recording', () => {
  it.each(['openai-baseline', 'openai-baseline-stream'])(
    '%s: serve every recorded call, servers stopped',
    async (name) => {
      const file = join(tmp, `${name}.handlers.mjs`);
      const run = await tapedeck(['export', example(name), '--msw', '--out', file]);
      expect(run.code, run.stderr).toBe(0);
      const { handlers, resetRecording } = (await import(pathToFileURL(file).href)) as {
        handlers: Parameters<typeof setupServer>;
        resetRecording: () => void;
      };
      const server = setupServer(...handlers);
      server.listen({ onUnhandledRequest: 'error' });
      try {
        const recording = await readRecording(example(name));
        for (const e of recording.events) {
          if (e.type !== 'http.exchange') continue;
          const x = e.payload as HttpExchangePayload;
          const model = recording.events.find((m) => m.type === 'model.called' && m.stepId === e.stepId);
          if (model?.type === 'model.called') {
            // The real SDK, as the agent used it: the recorded request, the recorded answer.
            const url = new URL(x.request.url);
            const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${url.origin}/v1`, maxRetries: 0 });
            const body = JSON.parse(bodyBytes(recording, x.request.body).toString('utf8'));
            if (body.stream) {
              let text = '';
              const stream = await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsStreaming);
              for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
              expect(text).toBe(model.payload.output.text ?? '');
            } else {
              const completion = await client.chat.completions.create(
                body as OpenAI.ChatCompletionCreateParamsNonStreaming,
              );
              expect(
                completion.choices[0]?.message.tool_calls?.map((t) => (t.type === 'function' ? t.function.name : '')) ??
                  [],
              ).toEqual(model.payload.output.toolCalls.map((t) => t.name));
            }
            continue;
          }
          const response = await fetch(x.request.url, {
            method: x.request.method,
            headers: { 'content-type': x.request.headers['content-type'] ?? 'application/json' },
            ...(x.request.body ? { body: new Uint8Array(bodyBytes(recording, x.request.body)) } : {}),
          });
          expect(response.status).toBe(x.response?.status);
          expect(Buffer.from(await response.arrayBuffer()).equals(bodyBytes(recording, x.response?.body))).toBe(true);
        }
      } finally {
        server.close();
        resetRecording();
      }
    },
  );
});
