// What an agent sends and what a model server answers is untrusted too: a request whose JSON nests
// past the reader's limit (250 levels, or 20 000, past what a recursive walk survives) and an
// answer whose token counts are past 2^53, negative or fractional. The recorder (the real
// `tapedeck record` path: an agent child process, a model server on 127.0.0.1) writes a recording
// every command reads, and it replays against the same agent without a divergence.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording, UsageSchema } from '../../src/recording/index.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-untrusted-agent-');
let server: TestServer;
const USAGES = [
  { prompt_tokens: 1e30, completion_tokens: 2 },
  { prompt_tokens: -3, completion_tokens: 1.5, completion_tokens_details: { reasoning_tokens: 2 ** 60 } },
];

beforeAll(async () => {
  let call = 0;
  server = await startServer((_req, _body, res) => {
    const usage = USAGES[call++ % USAGES.length];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${call}`,
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: `answer ${call}` }, finish_reason: 'stop' }],
        usage,
      }),
    );
  });
});
afterAll(async () => {
  await server?.close();
  tmp.remove();
});

describe('a hostile agent and model server', () => {
  for (const depth of [250, 20_000]) {
    it(`a request nested ${depth} deep and token counts the format cannot hold: a recording every command reads, replayed`, async () => {
      const agent = path.join(tmp.dir, `agent-${depth}.mjs`);
      writeFileSync(
        agent,
        `const content = '['.repeat(${depth}) + ']'.repeat(${depth});
for (const n of [1, 2]) {
  const body = '{"model":"gpt-4.1-mini","messages":[{"role":"user","content":' + content + '},{"role":"user","content":"call ' + n + '"}]}';
  const r = await fetch(process.env.MODEL_URL + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  console.log((await r.json()).choices[0].message.content);
}
`,
      );
      const out = path.join(tmp.dir, `rec-${depth}`);
      const recorded = await recordAgent(agent, out, { MODEL_URL: server.url });
      expect(recorded.stdout).toMatch(/^answer \d+\nanswer \d+\n$/);
      expect(recorded.exitCode).toBe(0);
      const recording = await readRecording(out);
      expect(recording.manifest.status).toBe('complete');
      const calls = recording.events.filter((e) => e.type === 'model.called');
      expect(calls).toHaveLength(2);
      for (const call of calls) expect(UsageSchema.safeParse(call.payload.usage).success).toBe(true);
      // The text the agent sent is still there whole: the exchange's body.
      const exchange = recording.events.find((e) => e.type === 'http.exchange');
      expect(exchange?.type === 'http.exchange' && exchange.payload.request.body?.size).toBeGreaterThan(depth * 2);

      const replayed = await replayExact(out, path.join(tmp.dir, `replay-${depth}`), 'none', { MODEL_URL: server.url });
      expect(replayed.divergences).toEqual([]);
      expect(replayed.exitCode).toBe(0);
    }, 120_000);
  }
});
