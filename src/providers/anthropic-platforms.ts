// Claude's Messages API as the cloud platforms serve it: the body, the answer and the stream are
// Anthropic's (read by anthropic-messages.ts), the model id is in the path (the body has none, and
// `anthropic_version` names the platform's version), and the model.called model is that id, the one
// the platform bills by (the answer's own `model` is Anthropic's name of it).
// - AWS Bedrock InvokeModel (POST …/model/{modelId}/invoke and …/invoke-with-response-stream:
//   `anthropic_version: "bedrock-2023-05-31"`; the model id URL-encoded, maybe an inference profile
//   `us.anthropic.…` or an ARN): `@anthropic-ai/bedrock-sdk`, the AWS SDK's InvokeModelCommand,
//   LangChain's Bedrock chat. Its stream is an AWS event stream of `chunk` events, each `bytes`
//   base64 of one Anthropic stream event: unwrapped here, then read as Anthropic's.
// - Google Vertex AI (POST …/publishers/anthropic/models/{model}:rawPredict and :streamRawPredict:
//   `anthropic_version: "vertex-2023-10-16"`): `@anthropic-ai/vertex-sdk`. Its stream is Anthropic's SSE.
import { anthropicMessages } from './anthropic-messages.js';
import { eventJson, type Framing, type StreamEvent } from './framing.js';
import { isJsonPost, pathOf, pathSegment } from './read.js';
import type { ModelOutput, Provider, ProviderRequest } from './types.js';

/** The events of an InvokeModelWithResponseStream: each `chunk`'s `bytes` as the Anthropic event it holds; other events (an exception) left out. */
function chunkEvents(events: readonly StreamEvent[]): StreamEvent[] {
  const out: StreamEvent[] = [];
  for (const event of events) {
    const bytes = event.event === 'chunk' ? eventJson(event)?.bytes : undefined;
    if (typeof bytes !== 'string') continue;
    const data = Buffer.from(bytes, 'base64').toString('utf8');
    const type = eventJson({ data, offsetMs: 0 })?.type;
    out.push({ ...(typeof type === 'string' ? { event: type } : {}), data, offsetMs: event.offsetMs });
  }
  return out;
}

/** The model's answer without the model's name in it: the call's model is the platform's id, from the path. */
function platformOutput(out: ModelOutput): ModelOutput {
  delete out.model;
  return out;
}

interface Platform {
  provider: string;
  /** The route; its first group is the model id, URL-encoded. */
  route: RegExp;
  framing?: Framing;
  /** The stream's events as Anthropic's (the platform's own framing unwrapped). */
  unwrap?: (events: readonly StreamEvent[]) => StreamEvent[];
  /** Model ids on the route that are no model call (Vertex's count-tokens). */
  notModels?: readonly string[];
}

function onPlatform(platform: Platform): Provider {
  const modelOf = (request: ProviderRequest) => pathSegment(platform.route.exec(pathOf(request))?.[1] ?? '');
  const unwrap = platform.unwrap ?? ((events: readonly StreamEvent[]) => [...events]);
  return {
    ...anthropicMessages,
    id: `${platform.provider}.anthropic.messages`,
    provider: platform.provider,
    api: 'anthropic.messages',
    ...(platform.framing === undefined ? {} : { framing: platform.framing }),
    detect: (request) =>
      isJsonPost(request) &&
      platform.route.test(pathOf(request)) &&
      Array.isArray(request.json.messages) &&
      typeof request.json.anthropic_version === 'string' &&
      !(platform.notModels ?? []).includes(modelOf(request)),
    readInput: (body, request) => ({ ...anthropicMessages.readInput(body, request), model: modelOf(request) }),
    decodeBody: (body, input) => platformOutput(anthropicMessages.decodeBody(body, input)),
    assembleStream: (events, input) => platformOutput(anthropicMessages.assembleStream(unwrap(events), input)),
  };
}

export const bedrockInvoke: Provider = onPlatform({
  provider: 'bedrock',
  route: /\/model\/([^/]+)\/(?:invoke|invoke-with-response-stream)$/,
  framing: 'aws-eventstream',
  unwrap: chunkEvents,
});

export const vertexAnthropic: Provider = onPlatform({
  provider: 'vertex',
  route: /\/publishers\/anthropic\/models\/([^/:]+):(?:rawPredict|streamRawPredict)$/,
  notModels: ['count-tokens'],
});
