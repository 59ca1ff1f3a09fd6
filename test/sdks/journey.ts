// The whole user journey of an agent framework through the real `tapedeck` CLI, as a user runs it:
// `record -- node agent.mjs`, `verify`, `replay` exact (nothing live, nothing real touched: the
// tool API's hit counter and the real world as sentinels), `replay --system-prompt` and
// `--prompt-patch` (the model called again with the new prompt where the framework keeps it, the
// steps named as recorded), `ledger`, `eval` with a small contract and `bisect`. The model's wire
// (JourneyWire) defaults to the FAKE OpenAI's Chat Completions with no usage on the stream; an
// agent on another API (LangGraph on Anthropic Messages) gives its own, usage bucket by bucket.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { Ledger } from '../../src/ledger/types.js';
import { readRecording, type Usage } from '../../src/recording/index.js';
import type { ReplayResult } from '../../src/replay/types.js';
import { tapedeck } from '../cli/run-cli.js';
import { type CliRecording, modelCalls, recordWithCli, steps } from './harness.js';
import type { FakeCall } from './servers/fake-openai.js';

/** What the journey reads of the model server: what it was sent, in order. */
export interface JourneyModel {
  calls: Array<{ stream: boolean; body: Record<string, unknown> }>;
}

/** The wire API the agent's model speaks, as the journey checks it (default: Chat Completions, no usage). */
export interface JourneyWire {
  provider: string;
  api: string;
  /** The system prompt of a request body, read independently of tapedeck. */
  systemOf(body: Record<string, unknown>): unknown;
  /** The tool names the server decided on call i. */
  toolCallsOf(i: number): string[];
  /** The usage buckets the server sent on call i; undefined when it sent none (the ledger estimates). */
  usageOf(i: number): Usage | undefined;
}

export interface Journey {
  agent: string;
  env: Record<string, string>;
  /** `record` flags that capture the agent's world (`--fs DIR`, `--db URL …`). */
  worldFlags: string[];
  /** The steps the run makes, [state type, name] in order. */
  steps: Array<[string, string]>;
  /** The recorded system prompt, and a line of it the patch changes. */
  prompt: string;
  model: JourneyModel;
  /** The wire API (default: Chat Completions against test/sdks/servers/fake-openai.ts, no usage sent). */
  wire?: JourneyWire;
  /** The agent's tool API, whose hits prove a replay never reached it. */
  weather: { hits(): number };
  /** The line the agent prints at the end (default: the FAKE OpenAI's final text). */
  finalLine?: RegExp;
  /** `--system-prompt`'s prompt, and the words `--prompt-patch` changes in the recorded one. */
  newPrompt?: string;
  patch?: [from: string, to: string];
  /** The real world the agent changes (rows, a file), read independently of tapedeck. */
  world(): Promise<unknown>;
  /** Called once the run is recorded and verified: e.g. stop the tool API, so the replays cannot reach it. */
  afterRecord?: () => Promise<void>;
  /** An eval contract the recorded run passes. */
  contract: string;
  dir: string;
}

/** `tapedeck replay … --json`: the result, and stderr, where the agent's own output goes with --json. */
async function replayCli(args: string[], env: Record<string, string>): Promise<ReplayResult & { stderr: string }> {
  const run = await tapedeck(['replay', ...args, '--json'], { env, timeoutMs: 180_000 });
  try {
    return { ...(JSON.parse(run.stdout) as ReplayResult), stderr: run.stderr };
  } catch {
    throw new Error(`tapedeck replay printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

const systemOf = (body: Record<string, unknown>): unknown =>
  (body.messages as Array<{ role: string; content: unknown }>).find((m) => m.role === 'system')?.content;

/** The FAKE OpenAI's Chat Completions (test/sdks/servers/fake-openai.ts), streamed without usage. */
function chatWire(model: JourneyModel): JourneyWire {
  const calls = model.calls as FakeCall[];
  return {
    provider: 'openai',
    api: 'chat.completions',
    systemOf,
    toolCallsOf: (i) => (calls[i]?.toolCall ? [calls[i].toolCall.name] : []),
    usageOf: (i) => {
      // The framework asked for no usage on its stream: none came, and none is claimed.
      expect(calls[i]?.usage).toEqual({});
      return undefined;
    },
  };
}

export async function runJourney(j: Journey): Promise<{ recorded: CliRecording }> {
  const wire = j.wire ?? chatWire(j.model);
  // Record, unchanged.
  const recorded = await recordWithCli({
    agent: j.agent,
    flags: j.worldFlags,
    env: j.env,
    out: path.join(j.dir, 'rec'),
  });
  expect(recorded.exitCode, recorded.stderr).toBe(0);
  expect(recorded.status).toBe('complete');
  expect(recorded.agentStdout).toMatch(j.finalLine ?? /^FINAL: FAKE final: the tool said /m);
  const recording = await readRecording(recorded.dir);
  expect(steps(recording).map(([, type, name]) => [type, name])).toEqual(j.steps);
  const calls = modelCalls(recording);
  expect(calls.length).toBe(j.model.calls.length);
  for (const [i, call] of calls.entries()) {
    const sent = j.model.calls[i];
    expect(call).toMatchObject({ provider: wire.provider, api: wire.api, streamed: sent?.stream });
    expect(call.system).toBe(j.prompt);
    expect(wire.systemOf(sent?.body ?? {})).toBe(j.prompt);
    expect(call.usage).toEqual(wire.usageOf(i));
  }
  expect(calls.flatMap((c) => c.output.toolCalls.map((t) => t.name))).toEqual(
    j.model.calls.flatMap((_, i) => wire.toolCallsOf(i)),
  );

  const verify = await tapedeck(['verify', recorded.dir]);
  expect(verify.code, verify.stderr).toBe(0);
  expect(verify.stdout).toMatch(/^ok /);
  await j.afterRecord?.();

  // Exact: everything from the recording, nothing real touched.
  const world = await j.world();
  const hits = j.weather.hits();
  const served = j.model.calls.length;
  const exact = await replayCli([recorded.dir, '--out', path.join(j.dir, 'exact')], j.env);
  expect(exact.divergences, exact.stderr).toEqual([]);
  expect(exact.status).toBe('complete');
  expect(exact.served.live).toBe(0);
  expect(exact.stderr).toContain(recorded.agentStdout);
  expect(j.weather.hits()).toBe(hits);
  expect(j.model.calls.length).toBe(served);
  expect(await j.world()).toEqual(world);
  expect(steps(await readRecording(exact.dir))).toEqual(steps(recording));

  // A new system prompt, then a patch of the recorded one: the model is called again with it where
  // the framework keeps it, the tool answered from the recording, the steps named as recorded.
  const newPrompt = j.newPrompt ?? 'You are a terse weather desk.';
  const promptFile = path.join(j.dir, 'prompt.txt');
  writeFileSync(promptFile, newPrompt);
  const [from, to] = j.patch ?? ['weather desk', 'careful weather desk'];
  const patched = j.prompt.replace(from, to);
  const patchFile = path.join(j.dir, 'prompt.patch');
  writeFileSync(patchFile, `--- a\n+++ b\n@@ -1 +1 @@\n-${j.prompt}\n+${patched}\n`);
  for (const [flag, file, expected] of [
    ['--system-prompt', promptFile, newPrompt],
    ['--prompt-patch', patchFile, patched],
  ] as const) {
    const before = j.model.calls.length;
    const result = await replayCli(
      [recorded.dir, '--mode', 'counterfactual', flag, file, '--out', path.join(j.dir, flag.slice(2))],
      j.env,
    );
    expect(result.status, result.stderr).toBe('complete');
    const sent = j.model.calls.slice(before);
    expect(sent.length).toBe(calls.length);
    expect(sent.map((c) => wire.systemOf(c.body))).toEqual(sent.map(() => expected));
    expect(result.served.live).toBe(calls.length);
    expect(result.heldBack).toEqual([]);
    // The model decided as recorded under the new prompt: no divergence, although the live model
    // minted new tool-call ids that the framework echoes in its next requests.
    expect(result.divergences).toEqual([]);
    const replayed = await readRecording(result.dir);
    expect(steps(replayed).map(([, type, name]) => [type, name])).toEqual(j.steps);
    expect(modelCalls(replayed).every((c) => c.system === expected)).toBe(true);
    expect(j.weather.hits()).toBe(hits);
    expect(await j.world()).toEqual(world);
  }

  // The ledger: the provider's usage, bucket by bucket, where the wire carried it; else estimated
  // and said to be, never 0 as a fact.
  const ledgerRun = await tapedeck(['ledger', recorded.dir, '--json']);
  expect(ledgerRun.code, ledgerRun.stderr).toBe(0);
  const ledger = JSON.parse(ledgerRun.stdout) as Ledger;
  const modelSteps = ledger.detail.filter((s) => s.model !== null);
  expect(modelSteps.length).toBe(calls.length);
  const ledgerText = await tapedeck(['ledger', recorded.dir]);
  if (wire.usageOf(0) !== undefined) {
    expect(modelSteps.map((s) => s.tokens)).toEqual(
      calls.map((_, i) => {
        const u = wire.usageOf(i);
        return (
          u && {
            uncachedInput: u.inputUncached,
            cacheRead: u.cacheRead,
            cacheWrite: u.cacheWrite,
            output: u.output,
            reasoning: u.reasoning,
          }
        );
      }),
    );
    expect(modelSteps.every((s) => s.usageKnown && !s.usageEstimated)).toBe(true);
    expect(ledgerText.stdout).toMatch(/^tokens: \d/m);
  } else {
    for (const s of modelSteps) {
      expect(s).toMatchObject({ usageKnown: false, usageEstimated: true });
      expect(s.tokens.uncachedInput).toBeGreaterThan(0);
      expect(s.tokens.output).toBeGreaterThan(0);
    }
    expect(ledgerText.stdout).toMatch(/^tokens: ~\d/m);
    expect(ledgerText.stdout).toContain(`estimated: steps ${modelSteps.map((s) => s.stepId).join(', ')}`);
  }
  expect(ledger.run.total_tokens).toBeGreaterThan(0);

  // Scored against a small contract, and bisected: the run is faithful, no bad step.
  const contractFile = path.join(j.dir, 'contract.yaml');
  writeFileSync(contractFile, j.contract);
  const evaluated = await tapedeck(['eval', recorded.dir, '--contract', contractFile, '--json']);
  expect(evaluated.code, evaluated.stdout + evaluated.stderr).toBe(0);
  const evaluation = (JSON.parse(evaluated.stdout) as { evaluations: Array<{ task: { hardSuccess: boolean } }> })
    .evaluations[0];
  expect(evaluation?.task.hardSuccess).toBe(true);
  const bisect = await tapedeck(['bisect', recorded.dir]);
  expect(bisect.code, bisect.stderr).toBe(0);
  expect(bisect.stdout).toMatch(/no bad step/);
  return { recorded };
}
