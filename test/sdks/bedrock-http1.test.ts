// The Bedrock travel desk over HTTP/1.1 (the SDK given a NodeHttpHandler): ConverseStream's AWS
// event stream goes through the node:http capture layer, which keeps a binary stream whole (no time
// to first token), and a counterfactual replay's live streamed answers come back through it too.
import { FAKE_AWS } from '../../examples/world/wire/bedrock.js';
import { travelDeskSuite } from './travel-desk.js';

process.env.AWS_ACCESS_KEY_ID = FAKE_AWS.accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = FAKE_AWS.secretAccessKey;

travelDeskSuite({
  agent: 'bedrock',
  sdk: '@aws-sdk/client-bedrock-runtime',
  provider: 'bedrock',
  api: 'converse',
  model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
  promptIn: (request) =>
    (request.system as Array<{ text?: string }>)
      .map((block) => block.text ?? '')
      .filter(Boolean)
      .join('\n'),
  unpriced: true,
  liveStream: true,
  buckets: ['cacheRead'],
  ttft: false,
  env: { BEDROCK_HTTP1: '1' },
});
