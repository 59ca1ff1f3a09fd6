// A binary stream (Bedrock's ConverseStream: AWS event-stream messages, recorded chunk by chunk as
// base64 over HTTP/2; gRPC the same) keeps its bytes wherever a recording's answers go: HAR export
// and import, msw handlers, an in-process replay, the answer chain's recorded exchanges, and the
// OTLP export names its provider as the GenAI conventions do. Joined as text, its bytes were lost.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frame as bedrockFrame } from '../../examples/world/wire/bedrock.js';
import { attributesOf, TracesSchema } from '../../src/interop/otlp-schema.js';
import { readRecording } from '../../src/recording/index.js';
import { recordedExchanges } from '../../src/replay/chain/recorded.js';
import { replayInProcess } from '../../src/replay/in-process.js';
import { replay } from '../../src/replay/index.js';
import { tapedeck } from '../cli/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-binary-stream-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const frame = (type: string, payload: unknown) => Buffer.from(bedrockFrame(type, payload as Record<string, unknown>));
/** The whole stream, cut into chunks at odd places (as HTTP/2 DATA frames cut it). */
const STREAM = Buffer.concat([
  frame('messageStart', { role: 'assistant' }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Booking é.' } }),
  frame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'book_flight' } } }),
  frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"flight_id":"FL-102"}' } } }),
  frame('messageStop', { stopReason: 'tool_use' }),
  frame('metadata', { usage: { inputTokens: 9, outputTokens: 4, cacheReadInputTokens: 64, cacheWriteInputTokens: 0 } }),
]);
const cuts = [0, 7, 61, 130, 131, STREAM.length];
const PIECES = cuts.slice(1).map((end, i) => STREAM.subarray(cuts[i], end));
/** A gRPC answer: a length-prefixed message with bytes that are not UTF-8, then the trailers. */
const GRPC = Buffer.from([0, 0, 0, 0, 4, 0xff, 0xfe, 0x80, 0x01]);

const MODEL_URL =
  'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream';
const GRPC_URL = 'https://inventory.example.test/inventory.v1.Stock/Get';

function entry(url: string, request: string, contentType: string, pieces: Buffer[], id: string) {
  const whole = Buffer.concat(pieces);
  return {
    startedDateTime: '2026-11-24T12:00:00.000Z',
    time: 40,
    request: {
      method: 'POST',
      url,
      httpVersion: 'HTTP/2',
      cookies: [],
      headers: [{ name: 'content-type', value: 'application/json' }],
      queryString: [],
      postData: { mimeType: 'application/json', text: request },
      headersSize: -1,
      bodySize: request.length,
    },
    response: {
      status: 200,
      statusText: '',
      httpVersion: 'HTTP/2',
      cookies: [],
      headers: [{ name: 'content-type', value: contentType }],
      content: { size: whole.length, mimeType: contentType, text: whole.toString('base64'), encoding: 'base64' },
      redirectURL: '',
      headersSize: -1,
      bodySize: whole.length,
    },
    cache: {},
    timings: { send: 0, wait: 10, receive: 30 },
    _tapedeck: {
      exchangeId: id,
      chunks: pieces.map((p, i) => ({ offsetMs: 10 + i * 5, data: p.toString('base64'), encoding: 'base64' })),
    },
  };
}

let dir: string;
beforeAll(async () => {
  const har = join(tmp, 'in.har');
  const request = JSON.stringify({
    messages: [{ role: 'user', content: [{ text: 'Book FL-102' }] }],
    system: [{ text: 'You book flights.' }],
  });
  writeFileSync(
    har,
    JSON.stringify({
      log: {
        version: '1.2',
        creator: { name: 'tapedeck', version: '0' },
        entries: [
          entry(MODEL_URL, request, 'application/vnd.amazon.eventstream', PIECES, 'x1'),
          entry(GRPC_URL, '{}', 'application/grpc', [GRPC.subarray(0, 6), GRPC.subarray(6)], 'x2'),
        ],
      },
    }),
  );
  writeFileSync(join(tmp, 'model-request.json'), request);
  dir = join(tmp, 'from-har');
  const imported = await tapedeck(['import', '--har', har, '--out', dir]);
  expect(imported.code, imported.stderr).toBe(0);
}, 60_000);

describe('a binary stream keeps its bytes', { timeout: 60_000 }, () => {
  it('is imported from HAR chunk by chunk and decoded as the model call it is', async () => {
    const r = await readRecording(dir);
    const call = r.events.find((e) => e.type === 'model.called');
    expect(call?.payload).toMatchObject({
      provider: 'bedrock',
      api: 'converse',
      streamed: true,
      output: { text: 'Booking é.', toolCalls: [{ name: 'book_flight', arguments: '{"flight_id":"FL-102"}' }] },
      usage: { inputUncached: 9, cacheRead: 64, output: 4 },
    });
    const x = r.events.find((e) => e.type === 'http.exchange' && e.payload.exchangeId === 'x1');
    expect(x?.type === 'http.exchange' && x.payload.response?.chunks?.map((c) => c.encoding)).toEqual(
      PIECES.map(() => 'base64'),
    );
  });

  it('is exported to HAR as its bytes', async () => {
    const file = join(tmp, 'out.har');
    const run = await tapedeck(['export', dir, '--har', '--out', file]);
    expect(run.code, run.stderr).toBe(0);
    const contents = (
      JSON.parse(readFileSync(file, 'utf8')) as {
        log: { entries: Array<{ response: { content: { text: string; encoding?: string } } }> };
      }
    ).log.entries.map((e) => e.response.content);
    expect(contents.map((c) => c.encoding)).toEqual(['base64', 'base64']);
    expect(contents.map((c) => Buffer.from(c.text, 'base64'))).toEqual([STREAM, GRPC]);
  });

  it('is answered by the exported msw handlers as its bytes', async () => {
    const file = join(tmp, 'handlers.mjs');
    const run = await tapedeck(['export', dir, '--msw', '--out', file]);
    expect(run.code, run.stderr).toBe(0);
    const { handlers } = (await import(pathToFileURL(file).href)) as { handlers: Parameters<typeof setupServer> };
    const server = setupServer(...handlers);
    server.listen({ onUnhandledRequest: 'error' });
    try {
      for (const [url, bytes] of [
        [MODEL_URL, STREAM],
        [GRPC_URL, GRPC],
      ] as const) {
        const response = await fetch(url, { method: 'POST', body: '{}' });
        expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
      }
    } finally {
      server.close();
    }
  });

  it('is answered as its bytes by an in-process replay, and read as bytes by the answer chain', async () => {
    const r = await readRecording(dir);
    const result = await replayInProcess(r, async () => {
      const model = await fetch(MODEL_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          messages: [{ role: 'user', content: [{ text: 'Book FL-102' }] }],
          system: [{ text: 'You book flights.' }],
        }),
      });
      const grpc = await fetch(GRPC_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return [Buffer.from(await model.arrayBuffer()), Buffer.from(await grpc.arrayBuffer())];
    });
    expect(result.divergences).toEqual([]);
    expect(result.result).toEqual([STREAM, GRPC]);
    expect(recordedExchanges(r).map((x) => x.body)).toEqual([GRPC]);
  });

  it.each(['fetch', 'undici'])('is answered as its bytes to a replayed agent (%s)', async (client) => {
    const agent = join(tmp, `agent-${client}.mjs`);
    writeFileSync(
      agent,
      `import { createHash } from 'node:crypto';
${client === 'undici' ? `import { request } from ${JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('undici')).href)};` : ''}
const body = ${JSON.stringify(
        JSON.stringify({
          messages: [{ role: 'user', content: [{ text: 'Book FL-102' }] }],
          system: [{ text: 'You book flights.' }],
        }),
      )};
for (const [url, sent] of [[${JSON.stringify(MODEL_URL)}, body], [${JSON.stringify(GRPC_URL)}, '{}']]) {
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: sent };
  const bytes = ${
    client === 'undici'
      ? 'Buffer.from(await (await request(url, init)).body.arrayBuffer())'
      : 'Buffer.from(await (await fetch(url, init)).arrayBuffer())'
  };
  console.log(createHash('sha256').update(bytes).digest('hex'));
}
`,
    );
    const result = await replay({
      recording: dir,
      mode: 'exact',
      command: [process.execPath, agent],
      isolation: 'none',
      out: join(tmp, `replay-${client}`),
      stdio: 'pipe',
      timeoutMs: 60_000,
    });
    expect(result.divergences, result.output?.stderr).toEqual([]);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(result.output?.stdout.trim().split('\n')).toEqual([sha(STREAM), sha(GRPC)]);
  });

  it("is answered as its bytes through the OS sandbox's proxy (curl, not Node)", async () => {
    const result = await replay({
      recording: dir,
      mode: 'exact',
      command: [
        'sh',
        '-c',
        `curl -sS -X POST -H 'content-type: application/json' --data-binary @- '${MODEL_URL}' < "$0" | sha256sum; curl -sS -X POST -H 'content-type: application/json' --data '{}' '${GRPC_URL}' | sha256sum`,
        join(tmp, 'model-request.json'),
      ],
      isolation: 'bwrap',
      out: join(tmp, 'replay-curl'),
      stdio: 'pipe',
      timeoutMs: 60_000,
    });
    expect(result.divergences, result.output?.stderr).toEqual([]);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(
      result.output?.stdout
        .split('\n')
        .map((l) => l.split(' ')[0])
        .filter(Boolean),
    ).toEqual([sha(STREAM), sha(GRPC)]);
  });

  it('is named aws.bedrock by the OTLP export (gen_ai.provider.name)', async () => {
    const file = join(tmp, 'otlp.json');
    const run = await tapedeck(['export', dir, '--otlp', '--out', file]);
    expect(run.code, run.stderr).toBe(0);
    const spans = TracesSchema.parse(JSON.parse(readFileSync(file, 'utf8'))).resourceSpans.flatMap((rs) =>
      (rs.scopeSpans ?? []).flatMap((ss) => ss.spans ?? []),
    );
    const chats = spans.map((s) => attributesOf(s.attributes)).filter((a) => a['gen_ai.operation.name'] === 'chat');
    expect(chats.map((a) => a['gen_ai.provider.name'])).toEqual(['aws.bedrock']);
  });
});
