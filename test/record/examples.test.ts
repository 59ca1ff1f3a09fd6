// The example world's agents (real openai and @anthropic-ai/sdk packages, streaming and not)
// recorded unchanged: they send the model the same requests and leave the same world as an
// unrecorded run, and each model call's usage equals what the model server reported, bucket by bucket.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../../examples/world/index.js';
import { eventJson, parseSse } from '../../src/providers/index.js';
import { type ModelCalledPayload, readRecording, type Usage } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';
import { recordExample } from './make-example-recordings.js';

let world: World;
const tmp = tempDir();

beforeAll(async () => {
  const url = process.env.TAPEDECK_PG_URL;
  world = await startWorld(url ? { db: url, freshDatabase: true } : {});
});
afterAll(async () => {
  await world?.stop();
  tmp.remove();
});

type Obj = Record<string, unknown>;
const n = (v: unknown) => (typeof v === 'number' ? v : 0);

/** The provider's usage object as the server sent it (last values win in a stream). */
function reportedUsage(entry: { api: string; stream: boolean; response: Obj }): Obj {
  if (!entry.stream) return entry.response.usage as Obj;
  let usage: Obj = {};
  for (const event of parseSse([{ offsetMs: 0, data: String(entry.response.sse) }])) {
    const data = eventJson(event);
    if (data?.usage) usage = { ...usage, ...(data.usage as Obj) };
    if (data?.type === 'message_start') usage = { ...usage, ...((data.message as Obj).usage as Obj) };
  }
  return usage;
}

/** The documented bucket mapping (docs/recording.md), computed independently of the codecs. */
function expectedBuckets(api: string, u: Obj): Usage {
  if (api === 'anthropic') {
    return {
      inputUncached: n(u.input_tokens),
      cacheRead: n(u.cache_read_input_tokens),
      cacheWrite: n(u.cache_creation_input_tokens),
      output: n(u.output_tokens),
      reasoning: 0,
    };
  }
  const cached = n((u.prompt_tokens_details as Obj | undefined)?.cached_tokens);
  const reasoning = n((u.completion_tokens_details as Obj | undefined)?.reasoning_tokens);
  return {
    inputUncached: n(u.prompt_tokens) - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: n(u.completion_tokens) - reasoning,
    reasoning,
  };
}

const VARIANTS = [
  { agent: 'openai', stream: false },
  { agent: 'openai', stream: true },
  { agent: 'anthropic', stream: false },
  { agent: 'anthropic', stream: true },
] as const;

describe('recording the example agents', () => {
  for (const variant of VARIANTS) {
    const name = `${variant.agent}${variant.stream ? '-stream' : ''}`;
    it(`records ${name} unchanged, with the server's usage bucket by bucket`, async () => {
      await world.reset();
      const plain = await world.runAgent({ agent: variant.agent, stream: variant.stream, prompt: 'baseline' });
      const plainLog = world.modelLog();
      const plainState = await world.state();

      const run = await recordExample(
        world,
        { name, agent: variant.agent, stream: variant.stream, prompt: 'baseline' },
        path.join(tmp.dir, name),
      );
      const log = world.modelLog().map((line) => JSON.parse(line) as Obj);
      const state = await world.state();

      expect(run.exitCode).toBe(0);
      expect(run.stdout.trim()).toBe(plain.answer);
      // The model saw byte-identical requests with and without the recorder.
      expect(log.map((e) => JSON.stringify(e.request))).toEqual(
        plainLog.map((line) => JSON.stringify((JSON.parse(line) as Obj).request)),
      );
      const withoutRunId = (s: typeof state) => ({
        ...s,
        db: { ...s.db, agent_notes: s.db.agent_notes?.map(({ run_id: _r, ...row }) => row) },
      });
      expect(withoutRunId(state)).toEqual(withoutRunId(plainState));

      const recording = await readRecording(run.dir);
      expect(recording.manifest.status).toBe('complete');
      expect(recording.manifest.runtime.sdkVersions).toHaveProperty(
        variant.agent === 'openai' ? 'openai' : '@anthropic-ai/sdk',
      );
      const calls = recording.events
        .filter((e) => e.type === 'model.called')
        .map((e) => e.payload as ModelCalledPayload);
      expect(calls).toHaveLength(log.length);
      calls.forEach((call, i) => {
        const entry = log[i] as { api: string; stream: boolean; response: Obj };
        expect(call.provider).toBe(variant.agent);
        expect(call.streamed).toBe(variant.stream);
        expect(call.usage, `usage of model call ${i + 1}`).toEqual(expectedBuckets(entry.api, reportedUsage(entry)));
      });
      // The baseline trajectory of examples/README.md, step by step.
      const steps = recording.events
        .filter((e) => e.type === 'step.started')
        .map((e) => (e.payload as { stateType: string }).stateType);
      expect(steps).toEqual([
        'THINK',
        'API_CALL',
        'THINK',
        'API_CALL',
        'THINK',
        'FILE_WRITE',
        'THINK',
        'DB_QUERY',
        'FINALIZE',
      ]);
      expect(calls[1]?.output.toolCalls[0]).toMatchObject({ name: 'book_flight' });
      expect(JSON.parse(calls[1]?.output.toolCalls[0]?.arguments ?? '{}')).toMatchObject({ passenger_id: 'P-100' });
      expect(calls.at(-1)?.output.text).toBe(plain.answer);
      // Streams keep their chunks and a time to first token.
      if (variant.stream) expect(calls.every((c) => c.ttftMs !== undefined)).toBe(true);
    });
  }
});
