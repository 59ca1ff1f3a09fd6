// Ollama's embeddings (POST /api/embed: `input`, one text or a list, answered with `embeddings` and
// `prompt_eval_count`; the older POST /api/embeddings: one `prompt`, one `embedding`, no counts),
// with deterministic 8-dimension vectors from a hash of each text.
import { createHash } from 'node:crypto';
import { type Meant, tokens, type Wire } from './shared.js';

/** The fake vectors' dimensions. */
export const OLLAMA_DIMENSIONS = 8;

function vector(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from(
    { length: OLLAMA_DIMENSIONS },
    (_, i) => Math.round(((digest[i] as number) / 255) * 2000 - 1000) / 1000,
  );
}

export const ollamaEmbedWire: Wire = {
  api: 'ollama-embed',
  route: (path) => (path === '/api/embed' || path === '/api/embeddings' ? { stream: false } : undefined),
  reply(body, { path }) {
    const model = String(body.model ?? 'fake-embedder');
    const legacy = path === '/api/embeddings';
    const texts = legacy
      ? [String(body.prompt ?? '')]
      : Array.isArray(body.input)
        ? body.input.map(String)
        : [String(body.input ?? '')];
    const count = texts.reduce((n, text) => n + tokens(text), 0);
    const meant: Meant = {
      model,
      toolCalls: [],
      usage: { inputUncached: legacy ? 0 : count, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    };
    return {
      meant,
      json: () =>
        legacy
          ? { embedding: vector(texts[0] as string) }
          : {
              model,
              embeddings: texts.map(vector),
              total_duration: 14_000_000,
              load_duration: 1_000_000,
              prompt_eval_count: count,
            },
      sse: () => '',
    };
  },
};
