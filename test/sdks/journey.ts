// The whole user journey of an agent framework through the real `tapedeck` CLI, as a user runs it:
// `record -- node agent.mjs`, `verify`, `replay` exact (nothing live, nothing real touched: the
// tool API's hit counter and the real world as sentinels), `replay --system-prompt` and
// `--prompt-patch` (the model called again with the new prompt where the framework keeps it, the
// steps named as recorded), `ledger`, `eval` with a small contract and `bisect`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { Ledger } from '../../src/ledger/types.js';
import { readRecording } from '../../src/recording/index.js';
import type { ReplayResult } from '../../src/replay/types.js';
import { tapedeck } from '../cli/run-cli.js';
import { type CliRecording, modelCalls, recordWithCli, steps } from './harness.js';
import type { FakeOpenAI } from './servers/fake-openai.js';
import type { WeatherApi } from './servers/weather-api.js';

export interface Journey {
  agent: string;
  env: Record<string, string>;
  /** `record` flags that capture the agent's world (`--fs DIR`, `--db URL …`). */
  worldFlags: string[];
  /** The steps the run makes, [state type, name] in order. */
  steps: Array<[string, string]>;
  /** The recorded system prompt, and a line of it the patch changes. */
  prompt: string;
  model: FakeOpenAI;
  weather: WeatherApi;
  /** The real world the agent changes (rows, a file), read independently of tapedeck. */
  world(): Promise<unknown>;
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

export async function runJourney(j: Journey): Promise<{ recorded: CliRecording }> {
  // Record, unchanged.
  const recorded = await recordWithCli({
    agent: j.agent,
    flags: j.worldFlags,
    env: j.env,
    out: path.join(j.dir, 'rec'),
  });
  expect(recorded.exitCode, recorded.stderr).toBe(0);
  expect(recorded.status).toBe('complete');
  expect(recorded.agentStdout).toMatch(/^FINAL: FAKE final: the tool said /m);
  const recording = await readRecording(recorded.dir);
  expect(steps(recording).map(([, type, name]) => [type, name])).toEqual(j.steps);
  const calls = modelCalls(recording);
  expect(calls.length).toBe(j.model.calls.length);
  for (const [i, call] of calls.entries()) {
    const sent = j.model.calls[i];
    expect(call).toMatchObject({ provider: 'openai', api: 'chat.completions', streamed: sent?.stream });
    expect(call.system).toBe(j.prompt);
    expect(systemOf(sent?.body ?? {})).toBe(j.prompt);
    // The framework asked for no usage on its stream: none came, and none is claimed.
    expect(call.usage).toBeUndefined();
    expect(sent?.usage).toEqual({});
  }
  expect(calls.flatMap((c) => c.output.toolCalls.map((t) => t.name))).toEqual(
    j.model.calls.flatMap((c) => (c.toolCall ? [c.toolCall.name] : [])),
  );

  const verify = await tapedeck(['verify', recorded.dir]);
  expect(verify.code, verify.stderr).toBe(0);
  expect(verify.stdout).toMatch(/^ok /);

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
  const newPrompt = 'You are a terse weather desk.';
  const promptFile = path.join(j.dir, 'prompt.txt');
  writeFileSync(promptFile, newPrompt);
  const patched = j.prompt.replace('weather desk', 'careful weather desk');
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
    expect(sent.map((c) => systemOf(c.body))).toEqual(sent.map(() => expected));
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

  // The ledger: no usage on the wire is estimated and said to be, never 0 as a fact.
  const ledgerRun = await tapedeck(['ledger', recorded.dir, '--json']);
  expect(ledgerRun.code, ledgerRun.stderr).toBe(0);
  const ledger = JSON.parse(ledgerRun.stdout) as Ledger;
  const modelSteps = ledger.detail.filter((s) => s.model !== null);
  expect(modelSteps.length).toBe(calls.length);
  for (const s of modelSteps) {
    expect(s).toMatchObject({ usageKnown: false, usageEstimated: true });
    expect(s.tokens.uncachedInput).toBeGreaterThan(0);
    expect(s.tokens.output).toBeGreaterThan(0);
  }
  expect(ledger.run.total_tokens).toBeGreaterThan(0);
  const ledgerText = await tapedeck(['ledger', recorded.dir]);
  expect(ledgerText.stdout).toMatch(/^tokens: ~\d/m);
  expect(ledgerText.stdout).toContain(`estimated: steps ${modelSteps.map((s) => s.stepId).join(', ')}`);

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
