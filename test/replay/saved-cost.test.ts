// A counterfactual replay serves an unchanged model call from the recording and reports the cost
// it did not pay again: priced by the ledger (src/ledger), so reasoning tokens cost what the
// ledger says they cost (output price when the table has no reasoning price), not nothing.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLedger, findModelPrice, recordingPrices } from '../../src/ledger/index.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { FIXTURES, startServer, type TestServer, tempDir } from '../record/helpers.js';

const USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 600,
  total_tokens: 1600,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 400 },
};

let model: TestServer;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir('tapedeck-saved-cost-');
  // A model server that answers at once, as a priced model whose table has no reasoning price.
  model = await startServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
        usage: USAGE,
      }),
    );
  });
});

afterAll(async () => {
  await model?.close();
  tmp?.remove();
});

describe('the cost a counterfactual replay saves', () => {
  it('is the ledger cost of the served model calls, reasoning tokens included', async () => {
    const out = path.join(tmp.dir, 'recorded');
    const recorded = await recordCommand({
      command: [process.execPath, path.join(FIXTURES, 'chat-agent.mjs')],
      env: { MODEL_URL: model.url, TOOL_URL: model.url },
      out,
      stdio: 'pipe',
    });
    expect(recorded.exitCode).toBe(0);
    const recording = await readRecording(out);
    const price = findModelPrice(recordingPrices(recording.manifest).table, 'gpt-4.1');
    expect(price?.reasoningPerMillion).toBeUndefined();

    const result = await replay({
      recording: out,
      mode: 'counterfactual',
      env: { MODEL_URL: model.url, TOOL_URL: model.url },
      out: path.join(tmp.dir, 'replayed'),
      stdio: 'pipe',
    });

    expect(result.served).toMatchObject({ recording: 1, live: 0 });
    expect(result.savedCost.calls).toBe(1);
    expect(result.savedCost.usage).toMatchObject({ reasoning: 400 });
    const { inputPerMillion, outputPerMillion } = price!;
    const { usage } = result.savedCost;
    // Reasoning is billed as output when the table has no reasoning price (src/ledger/cost.ts).
    const expected =
      (usage.inputUncached * inputPerMillion + (usage.output + usage.reasoning) * outputPerMillion) / 1e6;
    expect(result.savedCost.usd).toBeCloseTo(expected, 12);
    expect(result.savedCost.usd).toBeCloseTo(buildLedger(recording).totals.llm.total, 12);
  });
});
