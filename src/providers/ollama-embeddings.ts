// Ollama's embeddings: POST …/api/embed (`input`: one text or a list; `embeddings`, a list of
// vectors, and `prompt_eval_count`) and the older POST …/api/embeddings (`prompt`: one text; one
// `embedding`, no counts). Never streamed.
//
// Usage buckets: inputUncached = prompt_eval_count; nothing else (absent from /api/embeddings: no usage).
import { ollamaUsage } from './ollama.js';
import {
  asArray,
  EMBEDDINGS_CALL,
  embeddingDimensions,
  embeddingInputs,
  isJsonPost,
  isRecord,
  pathOf,
  str,
} from './read.js';
import type { ModelOutput, Provider } from './types.js';

function decodeBody(body: unknown): ModelOutput {
  if (!isRecord(body)) return { toolCalls: [], embeddings: { count: 0, dimensions: 0 } };
  const vectors = body.embedding !== undefined ? [body.embedding] : asArray(body.embeddings);
  const out: ModelOutput = {
    toolCalls: [],
    embeddings: { count: vectors.length, dimensions: embeddingDimensions(vectors[0]) },
  };
  if (typeof body.model === 'string') out.model = body.model;
  const usage = ollamaUsage(body);
  if (usage) out.usage = usage;
  return out;
}

export const ollamaEmbeddings: Provider = {
  id: 'ollama.embed',
  provider: 'ollama',
  api: 'embed',
  ...EMBEDDINGS_CALL,
  detect: (request) =>
    isJsonPost(request) &&
    typeof request.json.model === 'string' &&
    ((pathOf(request).endsWith('/api/embed') && 'input' in request.json) ||
      (pathOf(request).endsWith('/api/embeddings') && typeof request.json.prompt === 'string')),
  readInput: (body) => ({
    model: str(body.model) ?? '',
    messages: embeddingInputs(body.input ?? body.prompt),
  }),
  decodeBody,
  volatile: ['keep_alive'],
  structural: (body) => {
    const { keep_alive: _k, options: _o, ...rest } = body;
    return rest;
  },
};
