// Embeds with the real `ollama` SDK: three documents in one `embed` call (/api/embed, counted),
// then a query with the older `embeddings` (/api/embeddings, no counts), and prints the nearest
// document. Env: OLLAMA_HOST.
import { Ollama } from 'ollama';

const ollama = new Ollama({ host: process.env.OLLAMA_HOST });
const docs = ['Weather desk policy: quote Celsius.', 'Refunds take 14 days.', 'Paris office opens at 9:00.'];
const { embeddings } = await ollama.embed({ model: 'nomic-embed-text', input: docs });
const { embedding } = await ollama.embeddings({ model: 'nomic-embed-text', prompt: 'Refunds take 14 days.' });
const distance = (a, b) => a.reduce((n, x, i) => n + (x - b[i]) ** 2, 0);
const nearest = embeddings.map((e, i) => [distance(e, embedding), i]).sort((a, b) => a[0] - b[0])[0][1];
process.stdout.write(`NEAREST: ${docs[nearest]} [${embedding.length}]\n`);
