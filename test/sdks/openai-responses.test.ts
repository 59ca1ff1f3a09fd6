// The `openai` SDK's Responses API (`openai` 6.x), unchanged: the travel desk agent calls
// `responses.create` / `responses.stream(...).finalResponse()` with function tools and
// `instructions`, and hands tool results back as `function_call_output` items. Recorded, decoded
// (cached and reasoning tokens), replayed exactly, replayed with the fixed prompt (rewritten in
// `instructions`), costed and bisected.
import { travelDeskSuite } from './travel-desk.js';

travelDeskSuite({
  agent: 'openai-responses',
  sdk: 'openai',
  provider: 'openai',
  api: 'responses',
  model: 'gpt-4.1-mini',
  liveStream: true,
  promptIn: (request) => request.instructions,
});
