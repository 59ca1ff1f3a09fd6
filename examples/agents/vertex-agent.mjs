// The travel desk agent on Claude through Google Vertex AI, on the real `@anthropic-ai/sdk` shaped
// as `@anthropic-ai/vertex-sdk` shapes it (that package is not installed here; its client is the
// Anthropic client with the request moved as below, which this one does the same way): a Messages
// call goes to …/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict
// (:streamRawPredict when streamed, Anthropic's SSE), its body without `model` and with
// `anthropic_version: "vertex-2023-10-16"`, a Bearer token for auth. Streams with `--stream` /
// AGENT_STREAM=1 (the SDK's messages.stream helper). Prints the final answer on stdout. Env:
// VERTEX_BASE_URL (default `https://{region}-aiplatform.googleapis.com/v1`), VERTEX_PROJECT,
// VERTEX_REGION, VERTEX_MODEL; the rest as examples/README.md.
import Anthropic from '@anthropic-ai/sdk';
import { completerOf, runAnthropicTurns } from './anthropic-loop.mjs';

const project = process.env.VERTEX_PROJECT ?? 'travel-desk';
const region = process.env.VERTEX_REGION ?? 'us-east5';

class AnthropicVertex extends Anthropic {
  // As @anthropic-ai/vertex-sdk's AnthropicVertex.buildRequest.
  buildRequest(options, props) {
    if (options.body !== null && typeof options.body === 'object') {
      options.body = { ...options.body };
      options.body.anthropic_version ??= 'vertex-2023-10-16';
    }
    if (options.path === '/v1/messages' && options.method === 'post') {
      const { model, stream } = options.body;
      options.body.model = undefined;
      options.path = `/projects/${project}/locations/${region}/publishers/anthropic/models/${model}:${stream ? 'streamRawPredict' : 'rawPredict'}`;
    }
    return super.buildRequest(options, props);
  }
}

const client = new AnthropicVertex({
  baseURL: process.env.VERTEX_BASE_URL ?? `https://${region}-aiplatform.googleapis.com/v1`,
  apiKey: null,
  authToken: process.env.VERTEX_ACCESS_TOKEN ?? 'fake-token-not-a-secret',
  maxRetries: 0,
});
await runAnthropicTurns(await completerOf(client, process.env.VERTEX_MODEL ?? 'claude-3-5-haiku@20241022'));
