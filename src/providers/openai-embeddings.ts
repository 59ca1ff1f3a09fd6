// OpenAI Embeddings (POST …/embeddings with `input` and `model`): the openai SDK's
// `embeddings.create`, LlamaIndex's and LangChain's OpenAI embeddings, Azure OpenAI
// (…/openai/deployments/{deployment}/embeddings, the model in the path when the body has none) and
// any OpenAI-compatible server. Never streamed. The vectors (floats, or base64 float32s when the
// request asks `encoding_format: "base64"`, as the openai SDK does by default) stay in the response
// body; the call's output is their count and dimensions.
//
// Usage buckets: inputUncached = prompt_tokens; no cache, no output, no reasoning.
import { openaiUsage } from './openai-chat.js';
import {
  asArray,
  EMBEDDINGS_CALL,
  embeddingInputs,
  embeddingsOutput,
  isJsonPost,
  isRecord,
  pathOf,
  pathSegment,
  str,
  withoutKeys,
} from './read.js';
import type { ModelOutput, Provider, ProviderRequest } from './types.js';

const AZURE = /\/deployments\/([^/]+)\/embeddings$/;

/** The Azure deployment named in the path, which stands for the model there. */
const deploymentOf = (request: ProviderRequest): string | undefined => {
  const name = AZURE.exec(pathOf(request))?.[1];
  return name === undefined ? undefined : pathSegment(name);
};

function decodeBody(body: unknown): ModelOutput {
  if (!isRecord(body)) return embeddingsOutput([], 'embedding');
  const out = embeddingsOutput(asArray(body.data), 'embedding');
  if (typeof body.model === 'string') out.model = body.model;
  const usage = openaiUsage(body.usage);
  if (usage) out.usage = usage;
  return out;
}

export const openaiEmbeddings: Provider = {
  id: 'openai.embeddings',
  provider: 'openai',
  api: 'embeddings',
  ...EMBEDDINGS_CALL,
  detect: (request) =>
    isJsonPost(request) &&
    pathOf(request).endsWith('/embeddings') &&
    'input' in request.json &&
    (typeof request.json.model === 'string' || deploymentOf(request) !== undefined),
  readInput: (body, request) => ({
    model: str(body.model) ?? deploymentOf(request) ?? '',
    messages: embeddingInputs(body.input),
  }),
  decodeBody,
  volatile: ['user'],
  // `encoding_format` and `dimensions` change the answer's bytes: kept.
  structural: (body) => withoutKeys(body, ['user']),
};
