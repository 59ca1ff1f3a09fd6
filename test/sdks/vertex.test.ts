// Claude through Google Vertex AI: the travel desk agent on the real `@anthropic-ai/sdk`, its
// requests moved as `@anthropic-ai/vertex-sdk` moves them (examples/agents/vertex-agent.mjs: to
// …/publishers/anthropic/models/{model}:rawPredict and :streamRawPredict, the body without `model`
// and with `anthropic_version: "vertex-2023-10-16"`; the answer and the stream are Anthropic's).
// Recorded as model calls of the Vertex model id (cache reads and writes counted), replayed exactly,
// replayed with the fixed prompt (rewritten in `system`), costed by the ledger as the Anthropic
// entry the id is a snapshot of, scored and bisected.
import { expect } from 'vitest';
import { travelDeskSuite } from './travel-desk.js';

travelDeskSuite({
  agent: 'vertex',
  sdk: '@anthropic-ai/sdk',
  provider: 'vertex',
  api: 'anthropic.messages',
  model: 'claude-3-5-haiku@20241022',
  pricedAs: 'claude-3-5-haiku',
  promptIn: (request) => {
    expect(request.anthropic_version).toBe('vertex-2023-10-16');
    expect(request).not.toHaveProperty('model');
    return request.system;
  },
  liveStream: true,
  buckets: ['cacheRead'],
});
