// A weather agent on the openai SDK whose tool makes a model call of its own, as a RAG tool does
// (LlamaIndex's query engine): docs_search fetches a document, then asks the model to answer from
// it with a user message alone, no system message. Unchanged by tapedeck.
// Env: OPENAI_BASE_URL, OPENAI_API_KEY, WEATHER_URL; AGENT_PROMPT (the agent's system prompt),
// DOCS_CITY (which document docs_search fetches). Prints `FINAL: <text>`.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const model = 'fake-gpt-1';
const tools = [
  {
    type: 'function',
    function: {
      name: 'docs_search',
      description: 'Answers a question from the weather documents.',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  },
];

async function docsSearch({ query }) {
  const city = process.env.DOCS_CITY ?? 'paris';
  const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${city}&q=${encodeURIComponent(query)}`);
  const context = await res.text();
  // The tool's own model call: the answer writer has no system message.
  const answer = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: `Context information is below.\n${context}\nQuery: ${query}\nAnswer:` }],
  });
  return answer.choices[0]?.message.content ?? '';
}

const messages = [
  {
    role: 'system',
    content: process.env.AGENT_PROMPT ?? 'You are a weather desk for Paris. Use docs_search before answering.',
  },
  { role: 'user', content: 'What is the weather policy today?' },
];
for (let turn = 0; turn < 4; turn++) {
  const completion = await client.chat.completions.create({ model, messages, tools });
  const message = completion.choices[0]?.message;
  if (!message) break;
  messages.push(message);
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) {
    process.stdout.write(`FINAL: ${message.content}\n`);
    break;
  }
  for (const call of calls) {
    const content = await docsSearch(JSON.parse(call.function.arguments));
    messages.push({ role: 'tool', tool_call_id: call.id, content });
  }
}
