// Ollama's native completion API (POST …/api/generate: one `prompt`, an optional `system` that
// replaces the Modelfile's, `template`, `suffix`, `images`, and `context`, the token ids an earlier
// answer handed back to carry its conversation on), streamed as NDJSON by default (`response`
// pieces, the counts and the new `context` on the last line, `done: true`) or one JSON body with
// `stream: false`. No tools: an answer is text (and `thinking`, not counted apart).
//
// The recorded call's `messages` is the prompt as one user turn (`content`, and `images`,
// `suffix` when sent); `context` stays in the request body (opaque token ids, not text).
//
// Usage buckets: as /api/chat (ollama.ts): inputUncached = prompt_eval_count, output = eval_count.
import { ndjsonChunks, ollamaDone, ollamaStructural } from './ollama.js';
import { asArray, asText, isJsonPost, isRecord, pathOf, str } from './read.js';
import type { Json, ModelInput, ModelOutput, Provider, RecordedModelCall, Turn, TurnPart } from './types.js';

/**
 * The fields /api/generate takes. `/api/generate` is also many a web app's own route: a body with
 * a field Ollama does not know is not Ollama's (a newer Ollama field is added here).
 */
const FIELDS = new Set([
  'model',
  'prompt',
  'suffix',
  'images',
  'format',
  'options',
  'system',
  'template',
  'stream',
  'raw',
  'keep_alive',
  'context',
  'think',
  'logprobs',
  'top_logprobs',
]);

function assemble(chunks: Array<{ data: Json; offsetMs?: number }>): ModelOutput {
  const out: ModelOutput = { toolCalls: [] };
  let text: string | undefined;
  for (const { data, offsetMs } of chunks) {
    if (typeof data.model === 'string') out.model = data.model;
    if (typeof data.response === 'string') {
      text = (text ?? '') + data.response;
      if (data.response !== '' && offsetMs !== undefined) out.firstTokenOffsetMs ??= offsetMs;
    }
    ollamaDone(data, out);
  }
  if (text !== undefined) out.text = text;
  return out;
}

function readInput(body: Json): ModelInput {
  const message: Json = { role: 'user', content: str(body.prompt) ?? '' };
  if (body.images !== undefined) message.images = body.images;
  if (typeof body.suffix === 'string') message.suffix = body.suffix;
  const system = str(body.system);
  return { model: str(body.model) ?? '', ...(system !== undefined ? { system } : {}), messages: [message] };
}

function turns(call: RecordedModelCall): Turn[] {
  const out: Turn[] = call.system ? [{ role: 'system', parts: [{ kind: 'text', text: call.system }] }] : [];
  for (const message of call.messages) {
    if (!isRecord(message)) continue;
    const parts: TurnPart[] = [];
    for (const key of ['content', 'suffix'] as const)
      if (typeof message[key] === 'string' && message[key] !== '') parts.push({ kind: 'text', text: message[key] });
    for (const image of asArray(message.images)) parts.push({ kind: 'media', text: asText(image) });
    out.push({ role: 'user', parts });
  }
  return out;
}

export const ollamaGenerate: Provider = {
  id: 'ollama.generate',
  provider: 'ollama',
  api: 'generate',
  kind: 'chat',
  framing: 'ndjson',
  detect: (request) =>
    isJsonPost(request) &&
    pathOf(request).endsWith('/api/generate') &&
    typeof request.json.model === 'string' &&
    typeof request.json.prompt === 'string' &&
    Object.keys(request.json).every((key) => FIELDS.has(key)),
  readInput,
  decodeBody: (body) => assemble(isRecord(body) ? [{ data: body }] : []),
  assembleStream: (events) => assemble(ndjsonChunks(events)),
  turns,
  tools: () => [],
  systemPrompt: (body) => str(body.system),
  withSystemPrompt: (body, prompt) => ({ ...body, system: prompt }),
  volatile: ['keep_alive'],
  structural: ollamaStructural,
};
