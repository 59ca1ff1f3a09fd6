// The Anthropic SDK (`@anthropic-ai/sdk`), unchanged, given its system prompt as several content
// blocks — a long instruction with a cache breakpoint, then a short per-run block — sends them as
// a list; a prompt override (`--prompt-patch`, `--system-prompt` keeping a block's text) of the
// request it really sent keeps that list: the unchanged blocks with their text and cache_control.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { createPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { systemPromptOf } from '../../src/providers/index.js';
import { overrideRequestBody } from '../../src/replay/prompt.js';
import { installedVersion } from './harness.js';

/** A server that keeps the body of each request and answers with a minimal Messages reply. */
async function capture(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'msg_fake_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-fake',
          content: [{ type: 'text', text: 'FAKE ok.' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe(`@anthropic-ai/sdk ${installedVersion('@anthropic-ai/sdk')} with a system of several blocks`, () => {
  it('is overridden block by block: the blocks the new prompt keeps stay as sent, cache_control included', async () => {
    const server = await capture();
    try {
      const instruction = {
        type: 'text' as const,
        text: 'You are a travel desk.\nBook only for the traveler on file.',
        cache_control: { type: 'ephemeral' as const },
      };
      const today = { type: 'text' as const, text: 'Today is 2026-11-24.' };
      const client = new Anthropic({ apiKey: 'sk-ant-fake', baseURL: server.url, maxRetries: 0 });
      await client.messages.create({
        model: 'claude-fake',
        max_tokens: 64,
        system: [instruction, today],
        messages: [{ role: 'user', content: 'Book me a flight.' }],
      });
      const sent = server.bodies[0] ?? '';
      expect(JSON.parse(sent).system).toEqual([instruction, today]);
      const recorded = systemPromptOf('anthropic.messages', JSON.parse(sent)) ?? '';
      const systemOf = (text: string) => JSON.parse(text).system as unknown[];

      const nextDay = createPatch('p', recorded, recorded.replace('2026-11-24', '2026-11-25'));
      expect(systemOf(overrideRequestBody('anthropic.messages', sent, { kind: 'patch', patch: nextDay }))).toEqual([
        instruction,
        { type: 'text', text: 'Today is 2026-11-25.' },
      ]);
      const terse = `You are a terse travel desk.\n${today.text}`;
      expect(systemOf(overrideRequestBody('anthropic.messages', sent, { kind: 'replace', text: terse }))).toEqual([
        { type: 'text', text: 'You are a terse travel desk.', cache_control: { type: 'ephemeral' } },
        today,
      ]);
      // The rest of the request goes out as the SDK sent it.
      const { system: _s, ...rest } = JSON.parse(sent);
      const { system: _t, ...after } = JSON.parse(
        overrideRequestBody('anthropic.messages', sent, { kind: 'replace', text: terse }),
      );
      expect(after).toEqual(rest);
    } finally {
      await server.close();
    }
  });
});
