// Ollama's /api/chat is detected by its body, not its path alone: many web apps serve a chat route
// of their own at /api/chat.
import { describe, expect, it } from 'vitest';
import { detectProvider } from './model-call.js';

const post = (json: unknown) => ({
  method: 'POST',
  url: new URL('http://127.0.0.1:3000/api/chat'),
  headers: { 'content-type': 'application/json' },
  json,
});

describe('ollama.chat detection', () => {
  it("claims Ollama's chat, and not a web app's /api/chat with UI messages", () => {
    expect(
      detectProvider(post({ model: 'llama3.1:8b', messages: [{ role: 'user', content: 'hi' }], stream: false }))?.id,
    ).toBe('ollama.chat');
    expect(
      detectProvider(
        post({
          model: 'gpt-4.1',
          id: 'chat-1',
          messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
        }),
      ),
    ).toBeUndefined();
    expect(detectProvider(post({ messages: [{ role: 'user', content: 'hi' }] }))).toBeUndefined();
  });
});

describe('ollama.generate detection', () => {
  const generate = (json: unknown) => ({ ...post(json), url: new URL('http://127.0.0.1:3000/api/generate') });
  it("claims Ollama's completion, and not a web app's /api/generate with fields Ollama does not take", () => {
    const ollama = { model: 'llama3.1:8b', prompt: 'hi', system: 'Be brief.', context: [1, 2], stream: false };
    expect(detectProvider(generate(ollama))?.id).toBe('ollama.generate');
    expect(detectProvider(generate({ ...ollama, userId: 'u-1', style: 'poem' }))).toBeUndefined();
    expect(detectProvider(generate({ model: 'llama3.1:8b' }))).toBeUndefined();
  });
});
