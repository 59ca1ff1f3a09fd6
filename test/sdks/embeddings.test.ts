// Embeddings calls are model calls, end to end: a RAG agent on the real `openai` SDK embeds its
// documents (floats), the model picks `docs_search`, which embeds the query (the SDK's default
// base64) and answers the nearest document. Recorded with `tapedeck record` against the FAKE model
// server: the embeddings calls are RETRIEVE model steps named after their model (not the tool the
// model chose), their usage and cost are the ledger's, eval sees no side effect, bisect blames no
// SDK-added field, the exact replay is clean, and a counterfactual replay whose documents changed
// sends the changed embeddings call live to the model endpoint, as it does chat calls, and goes on.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { buildLedger } from '../../src/ledger/index.js';
import { type Recording, readRecording, silentToolCalls } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { tapedeck } from '../cli/run-cli.js';
import {
  type CliRecording,
  installedVersion,
  modelCalls,
  recordWithCli,
  replayExact,
  stepNamesOf,
  stepTypes,
  tempDir,
  toolCalls,
} from './harness.js';
import { FAKE_DIMENSIONS, type FakeCall, type FakeOpenAI, fakeVector, startFakeOpenAI } from './servers/fake-openai.js';

const DOCS = ['Weather desk policy: quote Celsius.', 'Refunds take 14 days.', 'Paris office opens at 9:00.'];
/** text-embedding-3-small in the bundled price table, per million input tokens. */
const EMBEDDING_PRICE = 0.02;

let tmp: ReturnType<typeof tempDir>;
let model: FakeOpenAI;
let run: CliRecording;
let recording: Recording;
let sent: FakeCall[];
const env = () => ({ OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-embeddings' });

beforeAll(async () => {
  tmp = tempDir();
  model = await startFakeOpenAI({ toolArgs: { docs_search: { query: 'refund policy' } } });
  run = await recordWithCli({ agent: 'embeddings-agent.mjs', env: env(), out: path.join(tmp.dir, 'rec') });
  recording = await readRecording(run.dir);
  sent = [...model.calls];
}, 120_000);
afterAll(async () => {
  await model?.close();
  tmp?.remove();
});

describe(`embeddings on the openai SDK (${installedVersion('openai')})`, { timeout: 180_000 }, () => {
  it('records each embeddings call as a RETRIEVE model step named after its model, with what the server sent', () => {
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.agentStdout).toContain(`SEARCH: refund policy -> ${DOCS[1]} [${FAKE_DIMENSIONS}]`);
    expect(sent.map((c) => [c.path, c.body.encoding_format ?? null])).toEqual([
      ['/v1/embeddings', 'float'],
      ['/v1/chat/completions', null],
      ['/v1/embeddings', 'base64'], // added by the SDK, not the agent
      ['/v1/chat/completions', null],
    ]);
    expect(stepTypes(recording)).toEqual([
      [1, 'RETRIEVE'],
      [2, 'THINK'],
      [3, 'RETRIEVE'],
      [4, 'FINALIZE'],
    ]);
    // Not named after the tool the model chose at step 2: it is the tool's model call, not the tool.
    expect(stepNamesOf(recording)[2]).toEqual([3, 'text-embedding-3-small', undefined, undefined]);
    expect(toolCalls(recording)).toEqual([]);
    const calls = modelCalls(recording);
    const embeddings = calls.filter((c) => c.api === 'embeddings');
    expect(embeddings.map((c) => [c.step, c.provider, c.model, c.streamed, c.messages, c.output])).toEqual([
      [1, 'openai', 'text-embedding-3-small', false, DOCS, { toolCalls: [], embeddings: { count: 3, dimensions: 8 } }],
      [
        3,
        'openai',
        'text-embedding-3-small',
        false,
        ['refund policy'],
        { toolCalls: [], embeddings: { count: 1, dimensions: 8 } },
      ],
    ]);
    for (const [i, call] of embeddings.entries()) {
      const tokens = (sent[i === 0 ? 0 : 2] as FakeCall).usage.prompt_tokens as number;
      expect(call.usage).toEqual({ inputUncached: tokens, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
    }
    // The vectors stay in the response body as the server sent them.
    const exchange = recording.events.find(
      (e) => e.type === 'http.exchange' && e.payload.exchangeId === embeddings[1]?.exchangeId,
    );
    const body = exchange?.type === 'http.exchange' ? JSON.parse(exchange.payload.response?.body?.text ?? '{}') : {};
    const bytes = Buffer.from(body.data[0].embedding, 'base64');
    expect([...new Float32Array(bytes.buffer, bytes.byteOffset, FAKE_DIMENSIONS)]).toEqual(fakeVector('refund policy'));
    // The tool the model asked for at step 2 did its work (step 3): no silent tool call.
    expect(silentToolCalls(recording.events)).toEqual([]);
  });

  it('is costed by the ledger per input token, the tokens the server reported', () => {
    const ledger = buildLedger(recording);
    const rows = ledger.steps.filter((s) => s.state_type === 'RETRIEVE');
    const tokens = [sent[0], sent[2]].map((c) => (c as FakeCall).usage.total_tokens as number);
    expect(rows.map((r) => [r.step_id, r.model_name, r.input_tokens_total, r.output_tokens, r.total_tokens])).toEqual([
      [1, 'text-embedding-3-small', tokens[0], 0, tokens[0]],
      [3, 'text-embedding-3-small', tokens[1], 0, tokens[1]],
    ]);
    for (const [i, row] of rows.entries())
      expect(row.llm_cost).toBeCloseTo(((tokens[i] ?? 0) * EMBEDDING_PRICE) / 1e6, 12);
    expect(ledger.warnings.filter((w) => w.includes('text-embedding'))).toEqual([]);
  });

  it('is not failed by eval as a side effect: a model endpoint served it', () => {
    const contract = parseContract(
      [
        'task_id: docs_refund_001',
        'input:',
        '  user_instruction: What is the refund policy?',
        'success_criteria:',
        '  required_outputs: [final_answer]',
        'expected_state:',
        '  side_effects: fail',
      ].join('\n'),
    );
    const task = evaluateRecording(recording, contract).task;
    expect(task.failureReasonCodes).not.toContain('UNAUTHORIZED_ACTION');
    expect(task.hardSuccess, JSON.stringify(task.failureReasonCodes)).toBe(true);
  });

  it('is bisected clean: fields the SDK added to an embeddings request are no ungrounded action', async () => {
    const found = await tapedeck(['bisect', run.dir]);
    expect(found.code, found.stdout + found.stderr).toBe(0);
    expect(found.stdout).toMatch(/no bad step/);
  });

  it('replays exactly, nothing live', async () => {
    const before = model.calls.length;
    const result = await replayExact(run.dir, env(), path.join(tmp.dir, 'exact'));
    expect(result.divergences).toEqual([]);
    expect(result.status).toBe('complete');
    expect(result.output?.stdout).toBe(run.agentStdout);
    expect(result.served.live).toBe(0);
    expect(model.calls.length).toBe(before);
    expect(stepTypes(await readRecording(result.dir))).toEqual(stepTypes(recording));
  });

  it('sends a changed embeddings call live to the model endpoint in a counterfactual replay, and the run goes on', async () => {
    const before = model.calls.length;
    const docs = ['Weather desk policy: quote Celsius.', 'Refund policy: 30 days.', 'Office: 9 to 6.'];
    const result = await replay({
      recording: run.dir,
      mode: 'counterfactual',
      modelEndpoint: `${model.url}/v1`,
      env: { ...env(), DOCS: docs.join('|') },
      out: path.join(tmp.dir, 'counterfactual'),
      stdio: 'pipe',
      timeoutMs: 120_000,
    });
    expect(result.status, result.output?.stderr).toBe('complete');
    expect(result.heldBack).toEqual([]);
    const live = model.calls.slice(before);
    // The changed documents' embeddings went live; the unchanged first chat and query embedding came
    // from the recording; the final chat, holding the newly nearest document, went live.
    expect(live.map((c) => c.path)).toEqual(['/v1/embeddings', '/v1/chat/completions']);
    expect(live[0]?.body.input).toEqual(docs);
    expect(result.served.live).toBe(2);
    // The query's nearest document among the new ones, by the FAKE vectors the new embeddings carried.
    const found = /^SEARCH: refund policy -> (.*) \[(\d+)\]$/m.exec(result.output?.stdout ?? '');
    expect(found?.[2]).toBe(String(FAKE_DIMENSIONS));
    expect(docs).toContain(found?.[1]);
    expect(result.output?.stdout).toContain(`FINAL: FAKE final: the tool said ${found?.[1]}`);
    const replayed = await readRecording(result.dir);
    expect(stepTypes(replayed)).toEqual(stepTypes(recording));
    const served = replayed.events.flatMap((e) => (e.type === 'http.exchange' ? [e.payload.servedFrom] : []));
    expect(served).toEqual(['live', 'recording', 'recording', 'live']);
  });

  it('leaves embeddings requests alone under a prompt patch: they have no system prompt to patch', async () => {
    const before = model.calls.length;
    const patch = [
      '--- a/prompt',
      '+++ b/prompt',
      '@@ -1 +1 @@',
      '-You are a desk assistant. Use docs_search before answering.',
      '+You are a terse desk assistant. Use docs_search before answering.',
      '',
    ].join('\n');
    const result = await replay({
      recording: run.dir,
      mode: 'counterfactual',
      promptPatch: patch,
      modelEndpoint: `${model.url}/v1`,
      env: env(),
      out: path.join(tmp.dir, 'patched'),
      stdio: 'pipe',
      timeoutMs: 120_000,
    });
    expect(result.status, result.output?.stderr).toBe('complete');
    // The chat calls carry the patched prompt, live; the embeddings calls are the recorded ones.
    const live = model.calls.slice(before);
    expect(live.map((c) => c.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    for (const call of live)
      expect((call.body.messages as Array<{ content: string }>)[0]?.content).toMatch(/^You are a terse desk/);
    const replayed = await readRecording(result.dir);
    const served = replayed.events.flatMap((e) => (e.type === 'http.exchange' ? [e.payload.servedFrom] : []));
    expect(served).toEqual(['recording', 'live', 'recording', 'live']);
  });
});
