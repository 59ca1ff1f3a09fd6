// A RAG agent on the `openai` SDK, unchanged by tapedeck: it embeds its documents (`encoding_format:
// "float"`), then asks the model, which calls `docs_search`; the tool embeds the query with the SDK's
// default (the SDK asks for base64 and decodes it) and answers the nearest document; the model answers.
// Env: OPENAI_BASE_URL (e.g. http://127.0.0.1:PORT/v1), OPENAI_API_KEY, DOCS (documents, `|`-separated).
// Prints `SEARCH: <query> -> <document> [<dimensions>]` for each search and `FINAL: <text>`.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const EMBEDDING_MODEL = 'text-embedding-3-small';
const docs = (
  process.env.DOCS ?? 'Weather desk policy: quote Celsius.|Refunds take 14 days.|Paris office opens at 9:00.'
).split('|');

const indexed = await client.embeddings.create({ model: EMBEDDING_MODEL, input: docs, encoding_format: 'float' });
const vectors = indexed.data.map((d) => d.embedding);

const cosine = (a, b) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / (Math.sqrt(na * nb) || 1);
};

async function docsSearch(query) {
  const embedded = await client.embeddings.create({ model: EMBEDDING_MODEL, input: query });
  const q = embedded.data[0].embedding;
  let best = 0;
  for (let i = 1; i < vectors.length; i++) if (cosine(q, vectors[i]) > cosine(q, vectors[best])) best = i;
  console.log(`SEARCH: ${query} -> ${docs[best]} [${q.length}]`);
  return docs[best];
}

const tools = [
  {
    type: 'function',
    function: {
      name: 'docs_search',
      description: 'Search the desk policy documents.',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  },
];
const messages = [
  { role: 'system', content: 'You are a desk assistant. Use docs_search before answering.' },
  { role: 'user', content: 'What is the refund policy?' },
];
for (let turn = 0; turn < 4; turn++) {
  const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
  const message = res.choices[0].message;
  messages.push(message);
  if (!message.tool_calls?.length) {
    console.log(`FINAL: ${message.content}`);
    break;
  }
  for (const call of message.tool_calls) {
    const { query } = JSON.parse(call.function.arguments);
    messages.push({ role: 'tool', tool_call_id: call.id, content: await docsSearch(query) });
  }
}
