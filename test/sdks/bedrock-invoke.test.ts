// Claude through Bedrock's InvokeModel API on the AWS SDK's Bedrock runtime client
// (`@aws-sdk/client-bedrock-runtime`, unchanged): the travel desk agent sends Anthropic's Messages
// body (`anthropic_version: "bedrock-2023-05-31"`, no `model`: the id, an inference profile, is in
// the path) with InvokeModelCommand, and InvokeModelWithResponseStreamCommand (an AWS event stream
// whose `chunk` events carry Anthropic's stream events as base64 bytes), SigV4-signed, the system
// prompt a text block with a cache breakpoint. Recorded as model calls of the inference profile's id
// (cache reads and writes counted), replayed exactly, replayed with the fixed prompt (rewritten in
// the `system` block, the breakpoint kept; the live calls signed again), counted by the ledger (a
// Bedrock id has no bundled price, said so), scored and bisected.
import { expect } from 'vitest';
import { FAKE_AWS } from '../../examples/world/wire/bedrock.js';
import { travelDeskSuite } from './travel-desk.js';

// The fake Bedrock checks SigV4 as AWS does: the replayer signs its live calls again, with these.
process.env.AWS_ACCESS_KEY_ID = FAKE_AWS.accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = FAKE_AWS.secretAccessKey;

travelDeskSuite({
  agent: 'bedrock-invoke',
  sdk: '@aws-sdk/client-bedrock-runtime',
  provider: 'bedrock',
  api: 'anthropic.messages',
  model: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
  promptIn: (request) => {
    expect(request.anthropic_version).toBe('bedrock-2023-05-31');
    expect(request).not.toHaveProperty('model');
    return (request.system as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');
  },
  unpriced: true,
  liveStream: true,
  buckets: ['cacheRead'],
});
