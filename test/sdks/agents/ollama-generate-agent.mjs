// Completes with the real `ollama` SDK's `generate` (/api/generate): a prompt under a system
// prompt, not streamed, then a follow-up handed the `context` the first answer returned, streamed
// (NDJSON) unless --plain. Prints both answers. Env: OLLAMA_HOST.
import { Ollama } from 'ollama';

const ollama = new Ollama({ host: process.env.OLLAMA_HOST });
// Built in code, so the only place a replay can change it is the request's `system`.
const system = ['You are', 'a geography tutor.'].join(' ');
const model = 'llama3.1:8b';
const first = await ollama.generate({ model, system, prompt: 'name the capital of France' });
process.stdout.write(`${first.response}\n`);
const prompt = 'and of Norway';
if (process.argv.includes('--plain')) {
  const second = await ollama.generate({ model, system, prompt, context: first.context });
  process.stdout.write(`${second.response}\n`);
} else {
  let text = '';
  for await (const part of await ollama.generate({ model, system, prompt, context: first.context, stream: true }))
    text += part.response;
  process.stdout.write(`${text}\n`);
}
