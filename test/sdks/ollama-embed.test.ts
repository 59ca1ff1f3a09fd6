// Ollama's embeddings on the real `ollama` SDK are model calls: `embed` (/api/embed, a list of
// texts, counted) and the older `embeddings` (/api/embeddings, one text, no counts), recorded with
// `tapedeck record` against the FAKE model server as RETRIEVE model steps with the server's count,
// in the ledger's tokens, and replayed exactly with the server stopped.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, startModelServer } from '../../examples/world/model-server.js';
import { OLLAMA_DIMENSIONS } from '../../examples/world/wire/ollama-embed.js';
import { buildLedger } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';
import {
  type CliRecording,
  installedVersion,
  modelCalls,
  recordWithCli,
  replayExact,
  stepTypes,
  tempDir,
} from './harness.js';

let tmp: ReturnType<typeof tempDir>;
let model: ModelServer;
let run: CliRecording;

beforeAll(async () => {
  tmp = tempDir();
  model = await startModelServer();
  run = await recordWithCli({
    agent: 'ollama-embed-agent.mjs',
    env: { OLLAMA_HOST: model.url },
    out: path.join(tmp.dir, 'rec'),
  });
}, 120_000);
afterAll(async () => {
  await model?.close();
  tmp?.remove();
});

describe(`embeddings on the ollama SDK (${installedVersion('ollama')})`, { timeout: 180_000 }, () => {
  it('records embed and embeddings as RETRIEVE model steps with the count the server sent', async () => {
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.agentStdout).toBe(`NEAREST: Refunds take 14 days. [${OLLAMA_DIMENSIONS}]\n`);
    const recording = await readRecording(run.dir);
    expect(stepTypes(recording).map(([, type]) => type)).toEqual(['RETRIEVE', 'RETRIEVE']);
    const served = model.log.map((line) => JSON.parse(line) as { path: string; meant: { usage: unknown } });
    const calls = modelCalls(recording);
    expect(calls.map((c) => [c.provider, c.api, c.model, c.output.embeddings])).toEqual([
      ['ollama', 'embed', 'nomic-embed-text', { count: 3, dimensions: OLLAMA_DIMENSIONS }],
      ['ollama', 'embed', 'nomic-embed-text', { count: 1, dimensions: OLLAMA_DIMENSIONS }],
    ]);
    expect(served.map((s) => s.path)).toEqual(['/api/embed', '/api/embeddings']);
    expect(calls[0]?.usage).toEqual(served[0]?.meant.usage);
    expect(calls[0]?.usage?.inputUncached).toBeGreaterThan(0);
    // /api/embeddings reports no count: no usage, estimated by the ledger rather than made up here.
    expect(calls[1]?.usage).toBeUndefined();
    const ledger = buildLedger(recording);
    expect(ledger.run.total_input_tokens).toBeGreaterThanOrEqual(calls[0]?.usage?.inputUncached ?? 0);
  });

  it('replays exactly with the model server stopped', async () => {
    await model.close();
    const result = await replayExact(run.dir, { OLLAMA_HOST: model.url }, path.join(tmp.dir, 'replay'));
    expect(result.divergences, result.output?.stderr).toEqual([]);
    expect(result.status).toBe('complete');
    expect(result.output?.stdout).toBe(run.agentStdout);
    expect(JSON.parse(readFileSync(path.join(result.dir, 'manifest.json'), 'utf8')).status).toBe('complete');
  });
});
