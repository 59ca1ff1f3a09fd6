// tapedeck/vitest against the example world: a test records its agent run once and replays it on
// every later run with the world stopped, and fails, naming the divergence, when the agent departs
// from its recording. Both shapes: a travel desk agent in the test's process (withRecording) and
// the example agent program (runRecorded / replayTest, replayed in the sandbox with its world).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PROMPTS, startWorld, TRAVELER, type World } from '../../examples/world/index.js';
import {
  DivergenceError,
  type RecordedRun,
  recordingDirFor,
  replayTest,
  runRecorded,
  withRecording,
} from '../../src/vitest/index.js';
import { example, root } from '../cli/run-cli.js';

/** The travel agents' tool definitions, from the agents' own (plain .mjs) module. */
const { TOOLS, jsonSchema } = (await import(pathToFileURL(join(root, 'examples/agents/tools.mjs')).href)) as {
  TOOLS: Array<{ name: string; description: string }>;
  jsonSchema(tool: unknown): Record<string, unknown>;
};

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-vitest-helper-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
// These tests record on a developer's machine, then replay: CI (set on CI machines) makes a
// missing recording an error instead, which has its own test below. Unset it for each test.
beforeEach(() => {
  vi.stubEnv('CI', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

interface DeskUrls {
  modelUrl: string;
  apiUrl: string;
}

/**
 * The travel desk agent, in this process: the openai SDK against the FAKE model, its API tools
 * over fetch, its files and notes in memory. Returns the answer and the tool calls it made.
 */
async function deskAgent(urls: DeskUrls, system: string, maxTurns = 12): Promise<{ answer: string; calls: string[] }> {
  const client = new OpenAI({ baseURL: `${urls.modelUrl}/v1`, apiKey: 'fake-key-not-a-secret', maxRetries: 0 });
  const files = new Map([['traveler.json', `${JSON.stringify(TRAVELER, null, 2)}\n`]]);
  const api = async (method: string, path: string, body?: unknown) =>
    (
      await fetch(`${urls.apiUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    ).text();
  const run = async (name: string, a: Record<string, string>): Promise<string> => {
    switch (name) {
      case 'search_flights':
        return api('GET', `/flights?${new URLSearchParams(a)}`);
      case 'get_passenger':
        return api('GET', `/passengers/${a.passenger_id}`);
      case 'book_flight':
        return api('POST', '/bookings', { flight_id: a.flight_id, passenger_id: a.passenger_id });
      case 'get_booking':
        return api('GET', `/bookings/${a.booking_id}`);
      case 'search_policies':
        return api('GET', `/policies?${new URLSearchParams({ q: a.query ?? '' })}`);
      case 'read_file':
        return files.get(String(a.path)) ?? '{"error":"no such file"}';
      case 'write_file':
        files.set(String(a.path), String(a.content));
        return '{"ok":true}';
      default:
        return '{"ok":true}';
    }
  };
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: system },
    {
      role: 'user',
      content: `Today is 2026-11-24. Hi, it's Dana Reyes. Book me a flight to Denver tomorrow under $300.`,
    },
  ];
  const tools = TOOLS.map((t) => ({
    type: 'function' as const,
    function: { name: t.name, description: t.description, parameters: jsonSchema(t) },
  }));
  const calls: string[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    const res = await client.chat.completions.create({ model: 'gpt-4.1-mini', messages, tools });
    const message = res.choices[0]?.message;
    if (!message) throw new Error('no message');
    messages.push(message);
    if (!message.tool_calls?.length) return { answer: message.content ?? '', calls };
    for (const call of message.tool_calls) {
      if (call.type !== 'function') continue;
      calls.push(`${call.function.name} ${call.function.arguments}`);
      const content = await run(call.function.name, JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  return { answer: '(gave up)', calls };
}

const readPrompt = async (file: string) => (await import('node:fs/promises')).readFile(file, 'utf8');

describe('tapedeck/vitest: withRecording (an agent in the test process)', () => {
  it('records once, replays with the world stopped, and fails on a changed prompt or a skipped call', async () => {
    const dir = join(tmp, 'in-process');
    const baseline = await readPrompt(PROMPTS.baseline);
    const world = await startWorld();
    const urls = { modelUrl: world.modelUrl, apiUrl: world.apiUrl };
    let recorded: { answer: string; calls: string[] };
    try {
      recorded = await withRecording(() => deskAgent(urls, baseline), { dir, mode: 'auto' });
    } finally {
      await world.stop();
    }
    // The baseline prompt books the passenger the model made up (P-100), as the scenario says.
    expect(recorded.calls.some((c) => c.startsWith('book_flight') && c.includes('P-100'))).toBe(true);
    expect(recorded.answer).toContain('BK-0001');

    // Nothing is running now: every call is answered from the recording.
    const replayed = await withRecording(() => deskAgent(urls, baseline), { dir, mode: 'auto' });
    expect(replayed).toEqual(recorded);

    // The fixed prompt makes other requests: the test fails and says where.
    const fixed = await readPrompt(PROMPTS.fixed);
    const changed = await withRecording(() => deskAgent(urls, fixed), { dir }).catch((e: unknown) => e);
    expect(changed).toBeInstanceOf(DivergenceError);
    expect((changed as DivergenceError).message).toMatch(/POST .*\/v1\/chat\/completions: not in the recording/);

    // Stopping early leaves recorded calls unmade: also a divergence.
    const short = await withRecording(() => deskAgent(urls, baseline, 1), { dir }).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(DivergenceError);
    expect((short as DivergenceError).divergences).toContainEqual(
      expect.stringMatching(/^recorded step 3 \(.*\): POST .*\/v1\/chat\/completions was not made$/),
    );

    // TAPEDECK_MODE=record records again over the old recording (here: the world is gone, so it fails live).
    const again = await withRecording(() => deskAgent(urls, baseline), { dir, mode: 'record' }).catch(
      (e: unknown) => e,
    );
    expect(again).toBeInstanceOf(Error);
  }, 300_000);

  it('names the recording after the test, and does not record under CI or in replay mode', async () => {
    const dir = recordingDirFor();
    expect(dir).toMatch(
      /\/test\/vitest\/__recordings__\/example-world\.test\.ts\/tapedeck-vitest-withrecording-an-agent-in-the-test-process-names-the-rec[a-z-]*-[0-9a-f]{8}$/,
    );
    expect(dir.startsWith(root)).toBe(true);
    // A second helper call in the same test gets its own recording.
    expect(recordingDirFor()).toBe(`${dir}-2`);
    expect(recordingDirFor({ name: 'Shared desk run' })).toBe(
      join(root, 'test/vitest/__recordings__/example-world.test.ts/shared-desk-run'),
    );
    const missing = join(tmp, 'missing');
    vi.stubEnv('CI', 'true');
    await expect(withRecording(() => 1, { dir: missing })).rejects.toThrow(
      /no recording at .*tests do not record in CI/,
    );
    vi.stubEnv('CI', '');
    await expect(withRecording(() => 1, { dir: missing, mode: 'replay' })).rejects.toThrow(/no recording at/);
  });
});

describe('tapedeck/vitest: runRecorded (the example agent program, with its world)', () => {
  it('records the agent with its files and database, replays it exactly with the world stopped, and fails on a changed prompt', async () => {
    const dir = join(tmp, 'program');
    const world: World = await startWorld();
    const options = {
      dir,
      command: world.agentCommand('openai', { stream: true }),
      env: world.agentEnv('baseline'),
      fsRoot: world.workspace,
      dbUrl: world.dbUrl,
      dbSchemas: ['travel'],
    };
    let first: RecordedRun;
    try {
      first = await runRecorded(options);
    } finally {
      await world.stop();
    }
    expect(first.mode).toBe('recorded');
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain('BK-0001');

    const second = await runRecorded(options);
    expect(second.mode).toBe('replayed');
    expect(second.stdout).toBe(first.stdout);
    expect(second.replay?.worldMatches).toBe(true);
    expect(second.replay?.served.live).toBe(0);

    const changed = await runRecorded({ ...options, env: { ...options.env, SYSTEM_PROMPT_FILE: PROMPTS.fixed } }).catch(
      (e: unknown) => e,
    );
    expect(changed).toBeInstanceOf(DivergenceError);
    expect((changed as DivergenceError).message).toMatch(/diverged from its recording/);
  }, 600_000);

  // The way a suite uses it: the recording is committed, and CI replays it without the world.
  replayTest(
    'the committed baseline recording of the openai agent replays exactly',
    {
      dir: example('openai-baseline'),
      mode: 'replay',
      command: [process.execPath, 'examples/agents/openai-agent.mjs'],
      cwd: root,
      // Recorded by the CLI elsewhere, with its prompt file in its env: the test trusts that env
      // (a recording made by runRecorded gets the env from the test, recording and replay alike).
      replay: { trustRecording: true },
    },
    (run) => {
      expect(run.mode).toBe('replayed');
      expect(run.stdout).toContain('BK-0001');
      expect(run.replay?.divergences).toEqual([]);
    },
  );
});
