// The AWS SDK's Bedrock runtime client (`@aws-sdk/client-bedrock-runtime` 3.1164), unchanged: the
// travel desk agent calls Converse and ConverseStream (an AWS event stream: binary messages,
// recorded chunk by chunk and served back byte for byte) over HTTP/2 as the SDK does by default, SigV4-signed, with
// `system` blocks and a cache point, `toolUse` / `toolResult` blocks. Recorded, decoded (cache reads
// and writes), replayed exactly, replayed with the fixed prompt (rewritten in the `system` text
// block, the cache point kept), counted by the ledger (a Bedrock model id is not in the bundled
// table: no price, said so), scored and bisected.
import { FAKE_AWS } from '../../examples/world/wire/bedrock.js';
import { travelDeskSuite } from './travel-desk.js';

// The fake Bedrock checks SigV4 as AWS does; the prompt override changes the body the agent signed,
// so the replayer signs its live calls again, with the credentials of its own environment.
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
});
