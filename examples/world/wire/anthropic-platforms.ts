// Claude's Messages API on the cloud platforms, as they answer: the body is Anthropic's with
// `anthropic_version` set to the platform's and no `model` (the model id is in the path; a body
// that has one, or another version, is refused with a 400 as the platforms refuse it), and the
// answer is Anthropic's (its `model` Anthropic's name of the model), from the Anthropic wire.
// - Bedrock InvokeModel (POST /model/{modelId}/invoke, SigV4-signed as bedrock.ts checks): the
//   stream (/invoke-with-response-stream) is an AWS event stream of `chunk` events, each `bytes`
//   base64 of one Anthropic stream event (message_stop with Bedrock's invocation metrics).
// - Vertex AI (POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict,
//   and :streamRawPredict: Anthropic's SSE).
import { anthropicWire } from './anthropic.js';
import { frame, signatureFault } from './bedrock.js';
import type { Obj, Wire } from './shared.js';

const BEDROCK = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
const VERTEX =
  /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/;

/** The Anthropic wire's reply to a platform's body, for the model id in the path. */
function platformReply(version: string, route: RegExp, anthropicName: (id: string) => string): Wire['reply'] {
  return (body, ctx) => {
    if (body.anthropic_version !== version)
      throw new Error(`anthropic_version: expected "${version}", got ${JSON.stringify(body.anthropic_version)}`);
    if ('model' in body) throw new Error('model: Extra inputs are not permitted');
    const id = decodeURIComponent(route.exec(ctx.path)?.[1] ?? '');
    const reply = anthropicWire.reply({ ...body, model: anthropicName(id) }, ctx);
    return { ...reply, meant: { ...reply.meant, model: id } };
  };
}

const bedrockReply = platformReply('bedrock-2023-05-31', BEDROCK, (id) =>
  id.replace(/^.*anthropic\./, '').replace(/-v\d+(?::\d+)?$/, ''),
);

export const bedrockInvokeWire: Wire = {
  api: 'bedrock-invoke',
  refuse: signatureFault,
  route(path) {
    const m = BEDROCK.exec(path);
    return m ? { stream: m[2] === 'invoke-with-response-stream' } : undefined;
  },
  reply(body, ctx) {
    const reply = bedrockReply(body, ctx);
    return {
      ...reply,
      stream: () => {
        const parts: Uint8Array[] = [];
        for (const block of reply.sse().split('\n\n')) {
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue;
          const event = JSON.parse(data) as Obj;
          if (event.type === 'message_stop')
            event['amazon-bedrock-invocationMetrics'] = {
              inputTokenCount: 0,
              outputTokenCount: 0,
              invocationLatency: 120,
            };
          parts.push(frame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefgh' }));
        }
        return { contentType: 'application/vnd.amazon.eventstream', parts };
      },
    };
  },
};

export const vertexAnthropicWire: Wire = {
  api: 'vertex-anthropic',
  route(path) {
    const m = VERTEX.exec(path);
    return m ? { stream: m[2] === 'streamRawPredict' } : undefined;
  },
  reply: platformReply('vertex-2023-10-16', VERTEX, (id) => id.replace('@', '-')),
};
