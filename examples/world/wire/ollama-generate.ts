// Ollama's completion API (POST /api/generate: `prompt`, `system`, `context`), as an Ollama server
// answers: `response` (pieces of it when streamed, NDJSON, the API's default), then `done: true`
// with the counts and `context`, the token ids of the conversation so far, which a client hands
// back to go on. The answer says which system prompt it was given and how long the carried context
// was, so a replay with another prompt gets another answer.
import { type Meant, type Obj, tokens, type Wire, wordPieces } from './shared.js';

const CREATED_AT = '2026-11-24T09:00:00.000000000Z';

/** Fake token ids: one a word, its length. */
const ids = (text: string): number[] =>
  text
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => word.length);

export const ollamaGenerateWire: Wire = {
  api: 'ollama-generate',
  route: (path) => (path === '/api/generate' ? {} : undefined),
  streamsByDefault: true,
  reply(body) {
    const model = String(body.model ?? 'fake-model');
    const system = typeof body.system === 'string' ? body.system : '';
    const prompt = String(body.prompt ?? '');
    const carried = Array.isArray(body.context) ? body.context.length : 0;
    const text = `Under "${system.split('\n')[0] ?? ''}" (${carried} tokens carried): ${prompt.toUpperCase()}`;
    const context = [...(Array.isArray(body.context) ? (body.context as number[]) : []), ...ids(prompt), ...ids(text)];
    const promptCount = tokens(system + prompt) + carried;
    const output = tokens(text);
    const meant: Meant = {
      model,
      text,
      toolCalls: [],
      usage: { inputUncached: promptCount, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 },
    };
    const done = {
      done: true,
      done_reason: 'stop',
      context,
      total_duration: 900_000_000,
      prompt_eval_count: promptCount,
      eval_count: output,
    };
    const line = (response: string, last?: Obj): Obj => ({
      model,
      created_at: CREATED_AT,
      response,
      ...(last ?? { done: false }),
    });
    return {
      meant,
      json: () => line(text, done),
      sse: () => '',
      stream: () => ({
        contentType: 'application/x-ndjson',
        parts: [...wordPieces(text).map((piece) => line(piece)), line('', done)].map((l) => `${JSON.stringify(l)}\n`),
      }),
    };
  },
};
