// Real agents (test/ledger/fixtures/unseen-agent.mjs) recorded against fake model servers speaking
// the providers' wire formats as they are, then `tapedeck ledger` and `tapedeck bisect` checked
// against what an engineer computes by hand:
// - an Anthropic Messages stream the client aborts before its message_delta: message_start's
//   `output_tokens: 1` is a placeholder, not the call's output. Its input (uncached and cache read)
//   is the provider's; its output is estimated from what reached the agent (at least that), and the
//   step says so (before, it was billed as 1 output token and shown as the provider's own count);
// - an agent whose world is a remote API (recorded with no files or database captured) that opens a
//   ticket and says so truthfully: the `claims` predicate takes the answers of its completed
//   mutating calls as the world's word (before, every such correct run was flagged bad at its answer);
// - parallel tool calls of one turn that no step answered were warned about as `steps 1, 1`.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bisectBelief, builtinPredicate } from '../../src/bisect/index.js';
import { buildLedger, formatLedger } from '../../src/ledger/index.js';
import { type Recording, readRecording, silentToolCallWarnings } from '../../src/recording/index.js';
import { recordAgent, startServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures', 'unseen-agent.mjs');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Plan {
  /** The ticket the API opens, and its HTTP status. */
  ticket: { id: string; status: number };
  /** The model's final answer after the tool result. */
  finalText: string;
}

/** One fake server: Anthropic Messages (streamed), OpenAI Chat Completions (streamed), POST /tickets. */
async function startUnseenServer(plan: Plan) {
  return startServer(async (req, body, res) => {
    const json = body ? (JSON.parse(body) as { messages?: unknown[] }) : {};
    const sse = (data: unknown, event?: string) =>
      res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
    if (req.url === '/tickets') {
      res.writeHead(plan.ticket.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(plan.ticket.status < 400 ? { id: plan.ticket.id, status: 'open' } : { error: 'down' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/v1/messages') {
      const ev = (type: string, data: Record<string, unknown>) => sse({ type, ...data }, type);
      ev('message_start', {
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-haiku-4-5-20251001',
          content: [],
          stop_reason: null,
          usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 2000, output_tokens: 1 },
        },
      });
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      for (let i = 0; i < 40 && !res.destroyed; i++) {
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'lorem ipsum ' } });
        await sleep(10);
      }
      ev('content_block_stop', { index: 0 });
      ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 120 } });
      ev('message_stop', {});
      res.end();
      return;
    }
    const chunk = (rest: Record<string, unknown>) =>
      sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', ...rest });
    if ((json.messages ?? []).length === 1) {
      chunk({
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                {
                  index: 0,
                  id: 'call_1',
                  type: 'function',
                  function: { name: 'create_ticket', arguments: '{"title":"Printer broken"}' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    } else {
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: plan.finalText }, finish_reason: null }] });
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    }
    chunk({ choices: [], usage: { prompt_tokens: 90, completion_tokens: 15, total_tokens: 105 } });
    res.end('data: [DONE]\n\n');
  });
}

const tmp = tempDir('tapedeck-unseen-');
afterAll(() => tmp.remove());

async function record(name: string, env: Record<string, string>, plan: Plan): Promise<Recording> {
  const server = await startUnseenServer(plan);
  const out = path.join(tmp.dir, name);
  try {
    const { exitCode, stdout } = await recordAgent(AGENT, out, { BASE_URL: server.url, ...env });
    expect(exitCode, stdout).toBe(0);
    expect(stdout).toContain('FINAL:');
  } finally {
    await server.close();
  }
  return readRecording(out);
}

const TICKET: Plan = { ticket: { id: 'T-9', status: 201 }, finalText: 'I created ticket T-9 for the broken printer.' };

describe('ledger: an Anthropic stream the client cut before its usage was final', () => {
  let run: Recording;
  beforeAll(async () => {
    run = await record('anthropic-cut', { AGENT_CASE: 'anthropic-cut', CUT_AFTER: '6' }, TICKET);
  }, 60_000);

  it("keeps the provider's input, estimates the output from what arrived, and says so", () => {
    const ledger = buildLedger(run);
    const [cut, whole] = ledger.detail;
    const text = run.events.find((e) => e.type === 'model.called' && e.stepId === cut?.stepId);
    const received = text?.type === 'model.called' ? (text.payload.output.text ?? '') : '';
    const pieces = received.split('lorem').length - 1;
    expect(pieces).toBeGreaterThanOrEqual(3);
    expect(pieces).toBeLessThan(40);
    // By hand: input 100 uncached + 2,000 cache reads, as message_start said; the output is at least
    // the "lorem ipsum " pieces that arrived (2 tokens each), not message_start's placeholder 1.
    expect(cut?.tokens).toMatchObject({ uncachedInput: 100, cacheRead: 2000, cacheWrite: 0, reasoning: 0 });
    const output = cut?.tokens.output ?? 0;
    expect(output).toBeGreaterThanOrEqual(2 * pieces);
    expect(cut).toMatchObject({ usageKnown: false, usageEstimated: true, inputKnown: true });
    // claude-haiku-4-5: 1 in, 0.1 cache read, 5 out per million.
    expect(cut?.cost).toBeCloseTo((100 * 1 + 2000 * 0.1 + output * 5) / 1e6, 12);
    // The whole stream is the provider's count, exactly.
    expect(whole?.tokens).toMatchObject({ uncachedInput: 100, cacheRead: 2000, cacheWrite: 0, output: 120 });
    expect(whole).toMatchObject({ usageKnown: true, usageEstimated: false });
    expect(whole?.cost).toBeCloseTo((100 + 200 + 600) / 1e6, 12);
    expect(ledger.warnings.join('\n')).toMatch(/step 1: the stream of the model call .* ended without its final usage/);

    const table = formatLedger(ledger);
    const row = table.split('\n').find((line) => /^\s+1\s/.test(line)) ?? '';
    expect(row).toMatch(new RegExp(`\\s100\\s+2,000\\s+0\\s+~${output}\\s+0\\s+~`));
    // The totals' input is exact (no `~`); their output holds the estimate.
    const total = table.split('\n').find((line) => line.startsWith('total')) ?? '';
    expect(total).toMatch(new RegExp(`\\s200\\s+4,000\\s+0\\s+~${output + 120}\\s`));
    expect(table).toContain('estimated: output of step 1 (stream ended without its final usage');
  });
});

describe('bisect claims: an agent whose world is a remote API (no files or database recorded)', () => {
  const firstBad = async (run: Recording, predicate = 'all') =>
    (await bisectBelief(run, builtinPredicate(predicate))).firstBad;

  it('a true claim, borne out by the completed POST that answered the id, is not flagged', async () => {
    const run = await record('ticket-good', { AGENT_CASE: 'ticket' }, TICKET);
    expect(run.pre.fs).toBeUndefined();
    expect(run.pre.db).toBeUndefined();
    expect(await firstBad(run)).toBeUndefined();

    // The same turn asking for two tools no step answers (parallel calls): one step, named once.
    const asked = run.events.find((e) => e.type === 'model.called' && e.stepId === 1);
    if (asked?.type !== 'model.called') throw new Error('no model call at step 1');
    const call = { id: 'call_1', name: 'lookup_printer', arguments: '{"floor":"2"}' };
    const twice = { ...asked, payload: { ...asked.payload, output: { toolCalls: [call, { ...call, id: 'call_2' }] } } };
    expect(silentToolCallWarnings([twice])[0]).toMatch(
      /^step 1: the model asked for tool "lookup_printer" 2 times \(call_1, call_2\)/,
    );
  }, 60_000);

  it('a claim naming an id no call answered is flagged at the answer', async () => {
    const run = await record(
      'ticket-invented',
      { AGENT_CASE: 'ticket' },
      { ...TICKET, finalText: 'I created ticket T-10 for the broken printer.' },
    );
    const bad = await firstBad(run);
    expect(bad?.step).toBe(3);
    expect(bad?.reason).toMatch(/\[claims\] step 3 claims .* no completed mutating call by step 3 mentions "T-10"/);
  }, 60_000);

  it('a claim after the call failed is flagged', async () => {
    const run = await record(
      'ticket-failed',
      { AGENT_CASE: 'ticket' },
      { ...TICKET, ticket: { id: 'T-9', status: 500 } },
    );
    const bad = await firstBad(run, 'claims');
    expect(bad?.step).toBe(3);
    expect(bad?.reason).toMatch(/no completed mutating call by step 3 mentions "T-9"/);
  }, 60_000);
});
