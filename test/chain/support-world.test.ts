// The answer chain on the second example world, the support desk (its own schema: customers,
// orders in cents, refunds). The careless run is recorded; replayed with the careful prompt, the
// agent makes calls the recording does not hold (the customer's own orders, a refund of another
// order). A sandbox service (the desk's API started from a command) or msw mocks answer them
// against the sandbox database, so the replay reaches an outcome; bisect-prompt over a prompt
// series judges each version by that outcome. The real API and database are never touched.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUPPORT_CONTRACT, SUPPORT_PROMPT_SERIES, SUPPORT_PROMPTS } from '../../examples/support/index.js';
import { bisectPrompts, memoryStore, replayProbe } from '../../src/bisect/index.js';
import { loadConfig, withOverrides } from '../../src/config/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { answerProvenance, readRecording } from '../../src/recording/index.js';
import { createAnswerChain, replay } from '../../src/replay/index.js';
import { type RecordedSupport, recordSupport } from './support-fixture.js';

const CONFIG = fileURLToPath(new URL('../../examples/support/tapedeck.config.ts', import.meta.url));
const MOCKS = fileURLToPath(new URL('./fixtures/support-mocks.ts', import.meta.url));
const contract = loadContract(SUPPORT_CONTRACT);
let tmp: string;
let careless: RecordedSupport;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-chain-support-'));
  careless = await recordSupport({ prompt: 'careless', out: path.join(tmp, 'careless') });
}, 300_000);
afterAll(async () => {
  await careless?.stop();
  await rm(tmp, { recursive: true, force: true });
});

async function carefulReplay(name: string, config: Parameters<typeof replay>[0]['config']) {
  const before = await careless.world.state();
  const result = await replay({
    recording: careless.dir,
    mode: 'counterfactual',
    systemPrompt: readFileSync(SUPPORT_PROMPTS.careful, 'utf8'),
    env: careless.env,
    out: path.join(tmp, name),
    stdio: 'pipe',
    ...(config ? { config } : {}),
  });
  // Nothing real: the sentinel in front of the API saw no request, the database is as it was.
  expect(careless.apiHits()).toBe(0);
  expect(await careless.world.state()).toEqual(before);
  const recording = await readRecording(result.dir);
  return { result, recording, task: evaluateRecording(recording, contract).task };
}

describe('the support desk replayed with the careful prompt', () => {
  it('dead-ends without an answer chain: the calls the recording does not hold are held back', {
    timeout: 240_000,
  }, async () => {
    const { result, task } = await carefulReplay('no-chain', undefined);
    expect(result.heldBack.map((h) => `${h.method} ${new URL(h.target).pathname}`)).toContain(
      'GET /customers/C-1042/orders',
    );
    expect(task.hardSuccess).toBe(false);
  });

  it('reaches the outcome with the desk API started from a command as a sandbox service', {
    timeout: 240_000,
  }, async () => {
    const { config } = withOverrides(await loadConfig({ file: CONFIG }));
    const { result, recording, task } = await carefulReplay('service', config);
    expect(result.heldBack).toEqual([]);
    expect(task.hardSuccess, JSON.stringify(task.failureReasonCodes)).toBe(true);
    expect(result.output?.stdout).toContain('O-7731');
    const refund = recording.events.find(
      (e) => e.type === 'db.changed' && e.payload.table === 'refunds' && e.payload.op === 'insert',
    );
    expect(refund?.type === 'db.changed' && refund.payload.after).toMatchObject({
      order_id: 'O-7731',
      customer_id: 'C-1042',
      amount_cents: 12999,
    });
    expect(answerProvenance(recording).steps.get(refund?.stepId ?? -1)).toBe('sandbox');
  });

  it('reaches the outcome with msw mocks reading the recording and writing the sandbox database', {
    timeout: 240_000,
  }, async () => {
    const { result, recording, task } = await carefulReplay('mocks', { mocks: MOCKS });
    expect(result.heldBack).toEqual([]);
    expect(result.served.mock).toBe(2);
    expect(task.hardSuccess, JSON.stringify(task.failureReasonCodes)).toBe(true);
    const refund = recording.events.find(
      (e) => e.type === 'db.changed' && e.payload.table === 'refunds' && e.payload.op === 'insert',
    );
    expect(refund?.type === 'db.changed' && refund.payload.after).toMatchObject({ id: 'RF-0001', order_id: 'O-7731' });
    expect(answerProvenance(recording).steps.get(refund?.stepId ?? -1)).toBe('mock');
  });
});

describe('bisect-prompt over a prompt series whose versions take different paths', () => {
  it('finds the first failing version by its outcome, with one kept service and a fresh database per probe', {
    timeout: 600_000,
  }, async () => {
    const versions = SUPPORT_PROMPT_SERIES.map((file) => ({
      label: path.basename(file),
      text: readFileSync(file, 'utf8'),
    }));
    const { config } = withOverrides(await loadConfig({ file: CONFIG }));
    const kept = createAnswerChain(config, { keep: true });
    // Where each sandbox answer went (the service's own address): the replay writes the URL the agent asked.
    const served = new Set<string>();
    const chain: typeof kept = {
      ...kept,
      async open(world) {
        const session = await kept.open(world);
        return {
          ...session,
          answerers: session.answerers.map((a) => ({
            ...a,
            accepts: a.accepts.bind(a),
            async answer(ask) {
              const answer = await a.answer(ask);
              if (answer && a.servedFrom === 'sandbox') served.add(new URL(answer.url).origin);
              return answer;
            },
          })),
          end: session.end.bind(session),
        };
      },
      close: () => kept.close(),
    };
    try {
      const result = await bisectPrompts({
        versions,
        recordingId: 'support-careless',
        store: memoryStore(),
        probe: replayProbe({
          recording: careless.dir,
          predicate: () => {
            throw new Error('judged by the contract');
          },
          contract,
          outRoot: path.join(tmp, 'probes'),
          chain,
        }),
      });
      expect(result.firstBad?.label).toBe('v3.txt');
      expect(result.firstBad?.reason).toMatch(/WRONG_EXECUTION_TARGET/);
      expect(result.lastGood?.label).toBe('v2.txt');
      // Every passing probe refunded in the sandbox; each started from the recorded database (a
      // fresh one), so no probe saw another's refund: each one's refund is RF-0001.
      for (const entry of result.path) {
        const probe = await readRecording(entry.recordingDir as string);
        const ids = probe.events.flatMap((e) =>
          e.type === 'db.changed' && e.payload.table === 'refunds' && e.payload.op === 'insert'
            ? [e.payload.after?.id]
            : [],
        );
        expect(ids, entry.label).toEqual(['RF-0001']);
      }
      // The service was started once for all probes: every sandbox answer came from one address,
      // and each is written at the desk API's address the agent asked.
      expect(served.size).toBe(1);
      const asked = new URL(careless.env.SUPPORT_API_URL as string).origin;
      for (const entry of result.path) {
        const probe = await readRecording(entry.recordingDir as string);
        for (const e of probe.events)
          if (e.type === 'http.exchange' && e.payload.servedFrom === 'sandbox')
            expect(new URL(e.payload.request.url).origin).toBe(asked);
      }
    } finally {
      await chain.close();
    }
    expect(careless.apiHits()).toBe(0);
  });
});
