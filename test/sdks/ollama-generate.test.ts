// Ollama's completion API on the real `ollama` SDK (`generate`, /api/generate): a prompt under a
// `system` prompt, then a follow-up carrying the first answer's `context`, plain and streamed
// (NDJSON). Recorded as model calls (the prompt, the system prompt, the counts the server sent, a
// local model: no price, said so by the ledger), replayed exactly with nothing live, and replayed
// with another system prompt: the live calls get it in `system`, and the follow-up carries the
// context the live answer returned.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, startModelServer } from '../../examples/world/model-server.js';
import type { Ledger } from '../../src/ledger/types.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { tapedeck } from '../cli/run-cli.js';
import { type CliRecording, modelCalls, recordWithCli, replayExact, stepTypes, tempDir } from './harness.js';

interface Served {
  path: string;
  stream: boolean;
  request: { system?: string; prompt: string; context?: number[] };
  meant: { text: string; usage: unknown };
}

const BASELINE = 'You are a geography tutor.';
const FIXED = 'You answer in one word.';
let tmp: ReturnType<typeof tempDir>;
let model: ModelServer;
const served = (from = 0): Served[] => model.log.slice(from).map((line) => JSON.parse(line) as Served);

beforeAll(async () => {
  tmp = tempDir();
  model = await startModelServer();
});
afterAll(async () => {
  await model?.close();
  tmp?.remove();
});

describe('Ollama /api/generate on the ollama SDK', { timeout: 240_000 }, () => {
  it.each([
    ['plain', false],
    ['stream', true],
  ] as const)('%s: recorded, costed, replayed exactly and with another system prompt', async (name, stream) => {
    const env = { OLLAMA_HOST: model.url };
    const before = model.log.length;
    const run: CliRecording = await recordWithCli({
      agent: 'ollama-generate-agent.mjs',
      args: stream ? [] : ['--plain'],
      env,
      out: path.join(tmp.dir, name),
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const sent = served(before);
    expect(sent.map((s) => [s.path, s.stream])).toEqual([
      ['/api/generate', false],
      ['/api/generate', stream],
    ]);
    expect(run.agentStdout).toBe(`${sent.map((s) => s.meant.text).join('\n')}\n`);
    const recording = await readRecording(run.dir);
    expect(stepTypes(recording).map(([, type]) => type)).toEqual(['FINALIZE', 'FINALIZE']);
    const calls = modelCalls(recording);
    expect(calls.map((c) => [c.provider, c.api, c.model, c.streamed, c.system])).toEqual([
      ['ollama', 'generate', 'llama3.1:8b', false, BASELINE],
      ['ollama', 'generate', 'llama3.1:8b', stream, BASELINE],
    ]);
    expect(calls.map((c) => c.messages)).toEqual([
      [{ role: 'user', content: 'name the capital of France' }],
      [{ role: 'user', content: 'and of Norway' }],
    ]);
    expect(calls.map((c) => c.output.text)).toEqual(sent.map((s) => s.meant.text));
    expect(calls.map((c) => c.usage)).toEqual(sent.map((s) => s.meant.usage));
    expect(calls[1]?.ttftMs !== undefined).toBe(stream);

    const ledgerRun = await tapedeck(['ledger', run.dir, '--json']);
    expect(ledgerRun.code, ledgerRun.stderr).toBe(0);
    const ledger = JSON.parse(ledgerRun.stdout) as Ledger;
    expect(ledger.run.total_input_tokens).toBe(calls.reduce((n, c) => n + (c.usage?.inputUncached ?? 0), 0));
    expect(ledger.run.total_output_tokens).toBe(calls.reduce((n, c) => n + (c.usage?.output ?? 0), 0));
    expect(ledger.run.total_llm_cost).toBe(0);
    const text = await tapedeck(['ledger', run.dir]);
    expect(text.stdout + text.stderr).toContain('no price for model llama3.1:8b');

    const servedBefore = model.log.length;
    const exact = await replayExact(run.dir, env, path.join(tmp.dir, `${name}-exact`));
    expect(exact.divergences, exact.output?.stderr).toEqual([]);
    expect(exact.output?.stdout).toBe(run.agentStdout);
    expect(exact.served.live).toBe(0);
    expect(model.log.length).toBe(servedBefore);

    const fixed = await replay({
      recording: run.dir,
      mode: 'counterfactual',
      systemPrompt: FIXED,
      modelEndpoint: model.url,
      env,
      out: path.join(tmp.dir, `${name}-fixed`),
      stdio: 'pipe',
      timeoutMs: 120_000,
    });
    expect(fixed.status, fixed.output?.stderr).toBe('complete');
    const live = served(servedBefore);
    expect(live.map((s) => [s.request.system, s.stream])).toEqual([
      [FIXED, false],
      [FIXED, stream],
    ]);
    // The follow-up carried the context the live first answer returned, not the recorded one.
    expect(live[1]?.request.context).not.toEqual(sent[1]?.request.context);
    expect(fixed.output?.stdout).toBe(`${live.map((s) => s.meant.text).join('\n')}\n`);
    expect(fixed.served.live).toBe(2);
    const replayed = modelCalls(await readRecording(fixed.dir));
    expect(replayed.map((c) => [c.system, c.streamed])).toEqual([
      [FIXED, false],
      [FIXED, stream],
    ]);
    expect(replayed.map((c) => c.usage)).toEqual(live.map((s) => s.meant.usage));
  });
});
