// What the test agents that shop over MCP share: a client of the stdio shop server
// (shop-mcp-server.mjs) and the tool loop against an OpenAI-compatible model (OPENAI_BASE_URL).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** A connected MCP client of the shop server, which gets this process's environment. */
export async function connectShop() {
  const shop = new Client({ name: 'shop-agent', version: '1.0.0' });
  await shop.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(path.dirname(fileURLToPath(import.meta.url)), 'shop-mcp-server.mjs')],
      env: { ...process.env },
    }),
  );
  return shop;
}

/** An MCP tool result's text. */
export const textOf = (result) => result.content.map((c) => c.text ?? '').join('');

/**
 * Asks the model with `tools` offered, runs each tool call it makes with `run[name](args)` (whose
 * string is the tool message), until it answers without one or `turns` run out; prints `FINAL: <text>`.
 */
export async function chatLoop({ prompt, tools, run, turns }) {
  const messages = [{ role: 'user', content: prompt }];
  for (let turn = 0; turn < turns; turn++) {
    const res = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-fake' },
      body: JSON.stringify({ model: 'fake-gpt-1', messages, tools }),
    });
    const message = (await res.json()).choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) {
      console.log(`FINAL: ${message.content}`);
      return;
    }
    for (const call of message.tool_calls) {
      const content = await run[call.function.name](JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
}
