// Google Gemini embeddings (POST …/models/{model}:embedContent, and :batchEmbedContents with
// `requests`, each naming its model and content), the Gemini API and Vertex AI alike. The vectors
// (`embedding.values`, `embeddings[].values`) stay in the response body; the call's output is their
// count and dimensions. The Gemini API reports no usage for these calls unless `usageMetadata` is
// there (read as generateContent's): without it the ledger says the tokens are unknown.
import { geminiUsage } from './gemini.js';
import {
  asArray,
  contentText,
  EMBEDDINGS_CALL,
  embeddingsOutput,
  isJsonPost,
  isRecord,
  pathSegment,
  withoutKeys,
} from './read.js';
import type { ModelOutput, Provider } from './types.js';

const ROUTE = /\/(?:models|tunedModels)\/([^/]+):(?:embedContent|batchEmbedContents)$/;

function decodeBody(body: unknown): ModelOutput {
  if (!isRecord(body)) return embeddingsOutput([], 'values');
  const out = embeddingsOutput(isRecord(body.embedding) ? [body.embedding] : asArray(body.embeddings), 'values');
  const usage = geminiUsage(body.usageMetadata);
  if (usage) out.usage = usage;
  return out;
}

export const geminiEmbeddings: Provider = {
  id: 'google.embedContent',
  provider: 'google',
  api: 'embedContent',
  ...EMBEDDINGS_CALL,
  detect: (request) =>
    isJsonPost(request) &&
    ROUTE.test(request.url.pathname) &&
    (isRecord(request.json.content) || Array.isArray(request.json.requests)),
  readInput(body, request) {
    const contents = Array.isArray(body.requests)
      ? body.requests.map((r) => (isRecord(r) ? r.content : undefined))
      : [body.content];
    return {
      model: pathSegment(ROUTE.exec(request.url.pathname)?.[1] ?? ''),
      // The text of each content (its parts joined), as OpenAI's `input` holds it.
      messages: contents.map((c) => contentText(isRecord(c) ? c.parts : undefined)),
    };
  },
  decodeBody,
  volatile: ['labels'],
  structural: (body) => withoutKeys(body, ['labels']),
};
