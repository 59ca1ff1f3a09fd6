// The optional LLM judge against a FAKE OpenAI-compatible judge server on 127.0.0.1 (the only allowed fake: the LLM).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRecording, judgeRecording, loadContract } from '../../src/evaluate/index.js';
import { travelRun } from './travel-runs.js';

let server: Server;
let baseUrl: string;
const seen: Array<{ url: string; body: { model: string; messages: Array<{ content: string }> } }> = [];
let reply: { status: number; content: string } = {
  status: 200,
  content: '{"score": 4, "confidence": 0.8, "reasons": "terse"}',
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', body: JSON.parse(text) });
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: reply.content }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const contract = loadContract('examples/contracts/book-flight.yaml');

describe('LLM judge', () => {
  it('asks the endpoint about the final answer and feeds its score into readability', async () => {
    reply = { status: 200, content: 'Here you go: {"score": 4, "confidence": 0.8, "reasons": "terse"}' };
    const recording = travelRun({ fixed: true });
    const verdict = await judgeRecording(recording, contract, { baseUrl, model: 'fake-judge' });
    expect(verdict).toMatchObject({ score: 4, confidence: 0.8, reasons: 'terse', model: 'fake-judge' });
    expect(seen.at(-1)!.url).toBe('/v1/chat/completions');
    expect(seen.at(-1)!.body.messages[1]!.content).toContain('Confirmation: BK-0001');
    const e = evaluateRecording(recording, contract, { judge: verdict });
    const judge = e.validators.find((v) => v.validatorName === 'llm_judge')!;
    expect(judge).toMatchObject({ score: 4, evaluatorModel: 'fake-judge', confidence: 0.8 });
    expect(e.task.readabilityScore).toBe(4);
    expect(e.task.failureReasonCodes).toContain('LOW_READABILITY_SCORE');
    expect(e.task.hardSuccess).toBe(true);
  });

  it('turns a failing judge into EVALUATOR_FAILURE without failing the hard gate', async () => {
    reply = { status: 500, content: '' };
    const verdict = await judgeRecording(travelRun({ fixed: true }), contract, { baseUrl, model: 'fake-judge' });
    expect(verdict.error).toContain('HTTP 500');
    const e = evaluateRecording(travelRun({ fixed: true }), contract, { judge: verdict });
    expect(e.task.hardSuccess).toBe(true);
    expect(e.validators.find((v) => v.validatorName === 'llm_judge')!.failureReasonCodes).toContain(
      'EVALUATOR_FAILURE',
    );
  });
});
