// The Ollama SDK (`ollama` 0.6), unchanged: the travel desk agent calls Ollama's native
// `/api/chat` with tools, plain (`stream: false`) and streamed (NDJSON, not SSE), tool calls whole
// with object arguments and no ids, results handed back as `tool` messages by `tool_name`.
// Recorded, decoded (prompt_eval_count / eval_count), replayed exactly, replayed with the fixed
// prompt (rewritten in the system message), counted by the ledger (a local model: no price, said
// so), scored and bisected.
import { travelDeskSuite } from './travel-desk.js';

travelDeskSuite({
  agent: 'ollama',
  sdk: 'ollama',
  provider: 'ollama',
  api: 'chat',
  model: 'llama3.1:8b',
  promptIn: (request) =>
    (request.messages as Array<{ role: string; content: unknown }>).find((m) => m.role === 'system')?.content,
  unpriced: true,
  liveStream: true,
  buckets: [],
});
