// The worker's replay jobs go down the same answer chain as `tapedeck replay`: the committed
// travel baseline, replayed by a worker with the fixed prompt and the example's project file,
// has its new calls answered by the travel API re-hosted in the sandbox, and passes the contract.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT, PROMPTS, startModelServer } from '../../examples/world/index.js';
import type { ModelServer } from '../../examples/world/model-server.js';
import { loadConfig, withOverrides } from '../../src/config/index.js';
import { answerProvenance, readRecording } from '../../src/recording/index.js';
import { openQueue, openWarehouse, runWorker, type Warehouse } from '../../src/store/index.js';
import { jobHandlers } from '../../src/store/jobs.js';

const CONFIG = fileURLToPath(new URL('../../examples/tapedeck.config.ts', import.meta.url));
const BASELINE = fileURLToPath(new URL('../../recordings/examples/openai-baseline', import.meta.url));
let dir: string;
let wh: Warehouse;
let model: ModelServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tapedeck-chain-worker-'));
  wh = await openWarehouse({ dir: join(dir, 'warehouse') });
  model = await startModelServer();
});
afterAll(async () => {
  await wh?.close();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a worker replay job', () => {
  it("uses the worker's project file: sandbox services answer what the recording cannot", {
    timeout: 300_000,
  }, async () => {
    const { config } = withOverrides(await loadConfig({ file: CONFIG }));
    const q = await openQueue(wh);
    const out = join(dir, 'replays');
    const id = await q.enqueue('replay', {
      recording: BASELINE,
      trustRecording: true, // committed: made elsewhere
      mode: 'counterfactual',
      systemPrompt: readFileSync(PROMPTS.fixed, 'utf8'),
      modelEndpoint: `${model.url}/v1`,
      contract: readFileSync(CONTRACT, 'utf8'),
      out,
    });
    const outcomes: string[] = [];
    const handlers = jobHandlers({ warehouse: wh, workDir: join(dir, 'worker'), config });
    const ran = await runWorker(q, handlers, { once: true, onJob: (e) => outcomes.push(e.error ?? e.outcome) });
    await q.close();
    expect(ran).toBe(1);
    expect(outcomes).toEqual(['done']);
    const replayed = await readRecording(join(out, id as string));
    expect(answerProvenance(replayed).counts.sandbox).toBeGreaterThanOrEqual(3);
    expect(answerProvenance(replayed).counts.blocked).toBe(0);
    const passed = await wh.query(
      `SELECT hard_success FROM eval_task_result r JOIN trace_run t ON t.trace_id = r.trace_id WHERE t.recording_id = $1`,
      [replayed.manifest.id],
    );
    expect(passed.rows).toEqual([{ hard_success: true }]);
  });
});
