// The travel desk scenario for an agent on a real SDK (examples/agents/): recorded unchanged with
// the `tapedeck record` CLI (workspace and database captured), its model calls checked against
// what the FAKE model server meant to send; replayed exactly with nothing live; replayed with the
// fixed prompt (the model gets it where the SDK puts the system prompt; the travel API re-hosted
// in the sandbox); costed by `tapedeck ledger` from the bundled price table; bisected by
// `tapedeck bisect` to the booking with the unseen passenger id, which the prompt change removes;
// scored against the travel contract (the baseline fails the hard gate, the fixed replay passes).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENTS,
  type AgentName,
  CONTRACT,
  EXAMPLES_DIR,
  PROMPTS,
  startWorld,
  type World,
  type WorldState,
} from '../../examples/world/index.js';
import type { Meant } from '../../examples/world/model-server.js';
import { loadConfig, withOverrides } from '../../src/config/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import type { Ledger } from '../../src/ledger/types.js';
import { type PriceEntry, readRecording, type UsageBucket } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import type { ReplayResult } from '../../src/replay/types.js';
import { tapedeck } from '../cli/run-cli.js';
import { type CliRecording, installedVersion, modelCalls, ROOT, recordWithCli, tempDir } from './harness.js';

export interface TravelDeskCase {
  agent: AgentName;
  /** The SDK package the agent runs on (its version is checked in the manifest). */
  sdk: string;
  provider: string;
  api: string;
  model: string;
  /** Where this SDK put the system prompt in the request the server received (read independently of tapedeck). */
  promptIn(request: Record<string, unknown>): unknown;
  /**
   * The bundled price table has no price for the model (a local Ollama model): the ledger counts
   * its tokens, costs it at 0 and says so. Default: priced.
   */
  unpriced?: boolean;
  /** The bundled entry the model is priced as, when its id names a snapshot of it (Vertex's `claude-3-5-haiku@20241022`). Default: the model. */
  pricedAs?: string;
  /** The usage buckets the API has beside input and output (default both). */
  buckets?: ReadonlyArray<'cacheRead' | 'reasoning'>;
  /**
   * Whether a streamed call has a time to first token (default true): a binary stream (Bedrock's
   * AWS event stream) is recorded whole, with no chunk offsets to tell it.
   */
  ttft?: boolean;
  /**
   * Also replay the streamed run with the fixed prompt: the model's live answer is streamed back
   * through the replay in the provider's framing (SSE, NDJSON, the AWS event stream), and the agent
   * keeps its own prompt, so the new one reaches the model only by the request's rewrite.
   */
  liveStream?: boolean;
  /** Variables the agent gets besides the world's (a transport choice). */
  env?: Record<string, string>;
}

interface LogEntry {
  path: string;
  stream: boolean;
  request: Record<string, unknown>;
  meant: Meant;
}

const PRICES = JSON.parse(readFileSync(path.join(ROOT, 'src/ledger/prices/2026-11-01.json'), 'utf8')) as {
  models: PriceEntry[];
};

/** A server that fails and counts every request: the real API must not be reached by a replay. */
async function sentinel(): Promise<{ url: string; hits(): number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(500).end('the sentinel was reached');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function travelDeskSuite(c: TravelDeskCase): void {
  let world: World;
  let tmp: ReturnType<typeof tempDir>;
  let baseline: string;
  let fixed: string;
  const recorded: Partial<Record<'plain' | 'stream', CliRecording>> = {};
  let counterfactual: ReplayResult | undefined;
  const log = (from = 0): LogEntry[] =>
    world
      .modelLog()
      .slice(from)
      .map((l) => JSON.parse(l) as LogEntry);

  beforeAll(async () => {
    tmp = tempDir();
    world = await startWorld();
    baseline = (await readFile(PROMPTS.baseline, 'utf8')).trim();
    fixed = await readFile(PROMPTS.fixed, 'utf8');
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    tmp?.remove();
  });

  // Each test records or replays the whole run with its world captured: minutes on a loaded machine.
  describe(`the travel desk agent on ${c.sdk} (${c.provider}.${c.api})`, { timeout: 400_000 }, () => {
    it.each([
      ['plain', false],
      ['stream', true],
    ] as const)(
      '%s: is recorded unchanged, decoded as the server meant it, and replays exactly with nothing live',
      async (name, stream) => {
        await world.reset();
        const run = await recordWithCli({
          agent: AGENTS[c.agent],
          args: stream ? ['--stream'] : [],
          flags: ['--fs', world.workspace, '--db', world.dbUrl, '--db-schema', 'travel'],
          env: { ...world.agentEnv('baseline'), ...c.env },
          out: path.join(tmp.dir, name),
        });
        expect(run.exitCode, run.stderr).toBe(0);
        expect(run.agentStdout).toMatch(/^Booked .* for Dana Reyes \(P-100\)/);
        recorded[name] = run;

        const recording = await readRecording(run.dir);
        expect(recording.manifest.status).toBe('complete');
        expect(recording.manifest.runtime.sdkVersions[c.sdk]).toBe(installedVersion(c.sdk));
        const served = log();
        const calls = modelCalls(recording);
        expect(calls).toHaveLength(served.length);
        for (const [i, call] of calls.entries()) {
          const sent = served[i] as LogEntry;
          expect(call).toMatchObject({ provider: c.provider, api: c.api, streamed: stream, model: c.model });
          expect(sent.stream).toBe(stream);
          // The SDK put the prompt where its API keeps it; tapedeck reads it back from there.
          expect(c.promptIn(sent.request)).toBe(baseline);
          expect(call.system).toBe(baseline);
          expect(call.usage).toEqual(sent.meant.usage);
          expect(call.output.text).toBe(sent.meant.text);
          expect(call.output.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments }))).toEqual(
            sent.meant.toolCalls,
          );
          expect(call.ttftMs !== undefined).toBe(stream && c.ttft !== false);
        }
        // Step 3 books with a passenger id nobody gave: what bisect finds below.
        expect(calls.find((call) => call.step === 3)?.output.toolCalls).toEqual([
          expect.objectContaining({ name: 'book_flight', arguments: '{"flight_id":"FL-102","passenger_id":"P-100"}' }),
        ]);

        const api = await sentinel();
        try {
          const before: WorldState = await world.state();
          const servedBefore = world.modelLog().length;
          const result = await replay({
            recording: run.dir,
            mode: 'exact',
            env: { ...world.agentEnv('baseline'), ...c.env, TRAVEL_API_URL: api.url },
            out: path.join(tmp.dir, `${name}-replay`),
            stdio: 'pipe',
            timeoutMs: 180_000,
          });
          expect(result.divergences, result.output?.stderr).toEqual([]);
          expect(result.status).toBe('complete');
          expect(result.output?.stdout).toBe(run.agentStdout);
          expect(result.served.live).toBe(0);
          expect(api.hits()).toBe(0);
          expect(world.modelLog().length).toBe(servedBefore);
          expect(await world.state()).toEqual(before);
          expect(result.worldDiff ?? []).toEqual([]);
          const replayed = await readRecording(result.dir);
          expect(replayed.post.db?.tables).toEqual(recording.post.db?.tables);
          expect(
            modelCalls(replayed).map(({ latencyMs: _l, ttftMs: _t, exchangeId: _x, step: _s, ...m }) => m),
          ).toEqual(calls.map(({ latencyMs: _l, ttftMs: _t, exchangeId: _x, step: _s, ...m }) => m));
        } finally {
          await api.close();
        }
      },
    );

    it.each(c.liveStream ? (['plain', 'stream'] as const) : (['plain'] as const))(
      '%s: is replayed with the fixed prompt: the model gets it where the SDK keeps it, and the run books the right passenger in the sandbox',
      async (name) => {
        const run = recorded[name];
        expect(run, `the ${name} run was recorded`).toBeDefined();
        if (!run) return;
        const { config } = withOverrides(await loadConfig({ file: path.join(EXAMPLES_DIR, 'tapedeck.config.ts') }));
        const before = await world.state();
        const apiBefore = world.apiRequests();
        const servedBefore = world.modelLog().length;
        // The streamed run's agent ignores the prompt the replay hands it (SYSTEM_PROMPT): the fixed
        // prompt reaches the model only by the provider's rewrite of the request, through the SDK.
        const own: Record<string, string> = name === 'stream' ? { AGENT_OWN_PROMPT: '1' } : {};
        const result = await replay({
          recording: run.dir,
          mode: 'counterfactual',
          systemPrompt: fixed,
          modelEndpoint: world.modelUrl,
          env: { ...world.agentEnv('baseline'), ...c.env, ...own },
          config,
          out: path.join(tmp.dir, `${name}-fixed-replay`),
          stdio: 'pipe',
          timeoutMs: 180_000,
        });
        expect(result.status, result.output?.stderr).toBe('complete');
        expect(result.output?.stdout).toMatch(/^Booked .* for Dana Reyes \(P-102\)/);
        const sent = log(servedBefore);
        expect(sent.length).toBeGreaterThan(0);
        for (const entry of sent) expect(c.promptIn(entry.request)).toBe(fixed);
        const replayed = await readRecording(result.dir);
        const calls = modelCalls(replayed);
        expect(calls.every((call) => call.system === fixed)).toBe(true);
        // The live answers were decoded in the framing they came in: streamed, their usage counted as
        // the server meant it (a stream the replay could not read would have no text, no calls, no usage).
        expect(calls.map((call) => call.streamed)).toEqual(sent.map(() => name === 'stream'));
        expect(calls.map((call) => call.usage)).toEqual(sent.map((entry) => entry.meant.usage));
        expect(calls.map((call) => call.output.text ?? '')).toEqual(sent.map((entry) => entry.meant.text ?? ''));
        expect(calls.flatMap((call) => call.output.toolCalls.map((t) => t.name))).toContain('read_file');
        const bookings = replayed.events.flatMap((e) =>
          e.type === 'db.changed' && e.payload.table === 'bookings' && e.payload.op === 'insert'
            ? [e.payload.after]
            : [],
        );
        expect(bookings).toEqual([expect.objectContaining({ passenger_id: 'P-102', flight_id: 'FL-102' })]);
        // Every model call went live (the prompt changed them all); the calls the new prompt adds went to
        // the re-hosted API in the sandbox; nothing was held back.
        expect(result.served.live).toBe(sent.length);
        expect(result.served.sandbox).toBeGreaterThan(0);
        expect(result.heldBack).toEqual([]);
        // Nothing real was touched: not the API, not the database, not the workspace.
        expect(world.apiRequests()).toBe(apiBefore);
        expect(await world.state()).toEqual(before);
        if (name === 'plain') counterfactual = result;
      },
    );

    it('is costed by `tapedeck ledger` from the bundled prices (or counted and said unpriced), bucket by bucket', async () => {
      const run = recorded.stream;
      expect(run, 'the streamed run was recorded').toBeDefined();
      if (!run) return;
      const ledgerRun = await tapedeck(['ledger', run.dir, '--json']);
      expect(ledgerRun.code, ledgerRun.stderr).toBe(0);
      const ledger = JSON.parse(ledgerRun.stdout) as Ledger;
      const calls = modelCalls(await readRecording(run.dir));
      const sum = (key: UsageBucket) => calls.reduce((n, call) => n + (call.usage?.[key] ?? 0), 0);
      expect(sum('inputUncached')).toBeGreaterThan(0);
      expect(sum('output')).toBeGreaterThan(0);
      expect(ledger.run.total_input_tokens).toBe(sum('inputUncached') + sum('cacheRead') + sum('cacheWrite'));
      expect(ledger.run.total_output_tokens).toBe(sum('output'));
      for (const bucket of c.buckets ?? ['cacheRead', 'reasoning']) expect(sum(bucket)).toBeGreaterThan(0);
      if (c.unpriced) {
        expect(PRICES.models.find((m) => m.model === c.model)).toBeUndefined();
        expect(ledger.run.total_llm_cost).toBe(0);
        const text = await tapedeck(['ledger', run.dir]);
        expect(text.stdout + text.stderr).toContain(`no price for model ${c.model}`);
        return;
      }
      const price = PRICES.models.find((m) => m.model === (c.pricedAs ?? c.model)) as PriceEntry;
      expect(price, `a bundled price for ${c.pricedAs ?? c.model}`).toBeDefined();
      let expected = 0;
      for (const { usage } of calls) {
        if (!usage) continue;
        expected +=
          (usage.inputUncached * price.inputPerMillion +
            usage.cacheRead * price.cachedInputPerMillion +
            usage.cacheWrite * (price.cacheWritePerMillion ?? price.inputPerMillion) +
            usage.output * price.outputPerMillion +
            usage.reasoning * (price.reasoningPerMillion ?? price.outputPerMillion)) /
          1e6;
      }
      expect(ledger.run.total_cached_input_tokens).toBe(sum('cacheRead'));
      expect(ledger.run.total_reasoning_tokens).toBe(sum('reasoning'));
      expect(ledger.run.total_llm_cost).toBeGreaterThan(0);
      expect(ledger.run.total_llm_cost).toBeCloseTo(expected, 10);
    });

    it('is scored against the contract: the baseline books the wrong passenger, the fixed-prompt replay passes', async () => {
      const run = recorded.plain;
      expect(run && counterfactual, 'the plain run and its fixed-prompt replay exist').toBeTruthy();
      if (!run || !counterfactual) return;
      const contract = loadContract(CONTRACT);
      const failed = evaluateRecording(await readRecording(run.dir), contract).task;
      expect(failed.hardSuccess).toBe(false);
      expect(failed.failureReasonCodes).toContain('WRONG_EXECUTION_TARGET');
      const passed = evaluateRecording(await readRecording(counterfactual.dir), contract).task;
      expect(passed.hardSuccess, JSON.stringify(passed.failureReasonCodes)).toBe(true);
    });

    it('is bisected by `tapedeck bisect` to step 3, and the prompt change removes that divergence', async () => {
      const run = recorded.plain;
      expect(run && counterfactual, 'the plain run and its fixed-prompt replay exist').toBeTruthy();
      if (!run || !counterfactual) return;
      const found = await tapedeck(['bisect', run.dir]);
      expect(found.code, found.stderr).toBe(1);
      expect(found.stdout).toContain(`first bad step: 3 (THINK ${c.model})`);
      expect(found.stdout).toMatch(/action: .*book_flight\(.*"passenger_id":"P-100"/);
      const gone = await tapedeck(['bisect', counterfactual.dir, '--baseline', run.dir]);
      expect(gone.code, gone.stderr).toBe(0);
      expect(gone.stdout).toMatch(/no bad step/);
      expect(gone.stdout).toMatch(/prompt change: disappeared — the divergence at baseline step 3 .* is gone/);
    });
  });
}
