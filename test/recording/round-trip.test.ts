// Property: any stream of events goes through writer and reader unchanged (after redaction),
// and writing what was read gives the same bytes again.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileTreeClash } from '../../src/recording/file-tree.js';
import {
  type AppendInput,
  canonicalJson,
  createRecordingWriter,
  createRedactor,
  type EventType,
  readRecording,
  STATE_TYPES,
} from '../../src/recording/index.js';
import { init, TEST_KEY, tempDir } from './helpers.js';

const str = fc.string({ maxLength: 24 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 24 });
const json = fc.jsonValue({ maxDepth: 3 });
const nat = fc.nat({ max: 1_000_000 });
const stateType = fc.constantFrom(...STATE_TYPES);
const time = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const sha = fc.stringMatching(/^[0-9a-f]{64}$/);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const headers = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), str, { maxKeys: 4 });
const body = fc.oneof(
  fc.record({ size: nat, contentType: opt(str), text: str }),
  fc.record({ size: nat, base64: fc.base64String({ maxLength: 40 }) }),
  fc.record({ size: nat, blob: sha, truncated: opt(fc.boolean()) }),
);
const segment = fc.stringMatching(/^[a-z0-9_-][a-z0-9_.-]{0,7}$/).filter((s) => s !== '.' && s !== '..');
const safePath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
const fileEntry = fc.record({ mode: fc.integer({ min: 0, max: 0o777 }), size: nat, sha256: sha });
const row = fc.dictionary(str, json, { maxKeys: 4 });

const payloads: { [K in EventType]?: fc.Arbitrary<unknown> } = {
  'run.started': fc.record({ command: fc.array(str, { maxLength: 3 }), cwd: str, pid: opt(nat) }),
  'step.started': fc.record({ stateType, name: str, agentId: opt(str) }),
  'step.completed': fc.record({
    status: fc.constantFrom('success', 'error', 'timeout', 'cancelled'),
    latencyMs: nat,
    errorType: opt(str),
  }),
  nondeterminism: fc.record({
    kind: fc.constantFrom('clock', 'random', 'uuid', 'randomBytes', 'hrtime'),
    values: fc.array(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), str), { maxLength: 5 }),
  }),
  'fs.changed': fc.record({
    path: safePath,
    op: fc.constantFrom('create', 'modify', 'delete'),
    before: opt(fileEntry),
    after: opt(fileEntry),
  }),
  'db.changed': fc.record({
    schema: str,
    table: str,
    op: fc.constantFrom('insert', 'update', 'delete'),
    key: row,
    before: opt(row),
    after: opt(row),
  }),
  'tool.called': fc.record({
    exchangeId: opt(str),
    kind: fc.constantFrom('http', 'mcp', 'in-process', 'db'),
    name: str,
    stateType,
    args: json,
    result: opt(json),
    resultBody: opt(body),
    mutating: fc.boolean(),
    latencyMs: nat,
  }),
  'model.called': fc.record({
    provider: fc.constantFrom('openai', 'anthropic'),
    api: fc.constantFrom('chat.completions', 'messages'),
    model: str,
    streamed: fc.boolean(),
    system: opt(str),
    messages: fc.array(json, { maxLength: 3 }),
    output: fc.record({
      text: opt(str),
      toolCalls: fc.array(fc.record({ id: str, name: str, arguments: str }), { maxLength: 2 }),
    }),
    usage: opt(fc.record({ inputUncached: nat, cacheRead: nat, cacheWrite: nat, output: nat, reasoning: nat })),
    latencyMs: nat,
  }),
  'http.exchange': fc.record({
    exchangeId: nonEmpty,
    request: fc.record({
      method: fc.constantFrom('GET', 'POST'),
      url: str.map((s) => `http://127.0.0.1:8080/${encodeURIComponent(s)}`),
      headers,
      body: opt(body),
    }),
    response: opt(
      fc.record({
        status: fc.integer({ min: 100, max: 599 }),
        headers,
        body: opt(body),
        chunks: opt(fc.array(fc.record({ offsetMs: nat, data: str }), { maxLength: 3 })),
      }),
    ),
    startedAt: time,
    durationMs: nat,
  }),
  'context.compiled': fc.dictionary(str, json, { maxKeys: 4 }),
  'run.completed': fc.record({
    status: fc.constantFrom('complete', 'failed'),
    exitCode: fc.option(fc.integer({ min: 0, max: 255 }), { nil: null }),
    finalOutput: opt(str),
  }),
};

const eventArb = fc.oneof(
  ...Object.entries(payloads).map(([type, payload]) =>
    fc.record({
      type: fc.constant(type as EventType),
      stepId: fc.nat({ max: 50 }),
      parentStepId: opt(fc.nat({ max: 50 })),
      time,
      payload: payload as fc.Arbitrary<unknown>,
    }),
  ),
);

/**
 * Streams a recorder can write: each step started once, and no fs.changed path that is a file
 * and a folder of another (the reader refuses both as contradictions).
 */
const streamArb = (constraints: { minLength?: number; maxLength: number }) =>
  fc.array(eventArb, constraints).map((stream) => {
    const started = new Set<number>();
    const paths: string[] = [];
    return stream.filter((e) => {
      if (e.type === 'step.started') {
        if (started.has(e.stepId)) return false;
        started.add(e.stepId);
      }
      if (e.type === 'fs.changed') {
        const path = (e.payload as { path: string }).path;
        if (fileTreeClash([...paths, path])) return false;
        paths.push(path);
      }
      return true;
    });
  });

describe('recording round trip', () => {
  it('reads back every written event exactly as the redactor stored it, and rewrites to the same bytes', async () => {
    const redactor = createRedactor({ key: TEST_KEY });
    await fc.assert(
      fc.asyncProperty(streamArb({ maxLength: 25 }), async (stream) => {
        const root = tempDir('tapedeck-prop-');
        const first = await createRecordingWriter(join(root, 'a'), init('prop', { id: 'prop', validate: true }));
        for (const event of stream) first.append(event as AppendInput);
        await first.close('complete');

        const rec = await readRecording(join(root, 'a'));
        const expected = stream.map((e, seq) =>
          JSON.parse(
            canonicalJson({
              seq,
              traceId: first.traceId,
              stepId: e.stepId,
              parentStepId: e.parentStepId,
              type: e.type,
              time: e.time,
              payload: redactor.payload(e.type, e.payload),
            }),
          ),
        );
        expect(rec.events).toEqual(expected);

        const second = await createRecordingWriter(join(root, 'b'), init('prop', { id: 'prop' }));
        for (const event of rec.events) second.append(event as AppendInput);
        await second.close('complete');
        for (const file of ['events.jsonl', 'manifest.json']) {
          expect(readFileSync(join(root, 'b', file))).toEqual(readFileSync(join(root, 'a', file)));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('reads a recording cut at any byte as its complete lines, reporting a cut-off last line', async () => {
    await fc.assert(
      fc.asyncProperty(
        streamArb({ minLength: 1, maxLength: 15 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (stream, at) => {
          const root = tempDir('tapedeck-cut-');
          const w = await createRecordingWriter(join(root, 'live'), init('cut'));
          for (const event of stream) w.append(event as AppendInput);
          w.flush();
          // What a SIGKILL leaves: the first manifest (incomplete, no integrity) and events cut anywhere.
          const manifest = readFileSync(join(root, 'live', 'manifest.json'));
          const events = readFileSync(join(root, 'live', 'events.jsonl'));
          await w.close('complete');
          const cut = Math.floor(at * events.length);
          const dir = join(root, 'killed');
          mkdirSync(dir);
          writeFileSync(join(dir, 'manifest.json'), manifest);
          writeFileSync(join(dir, 'events.jsonl'), events.subarray(0, cut));

          const rec = await readRecording(dir);
          const whole = events.subarray(0, cut).toString('utf8').split('\n');
          const partial = whole.pop() as string;
          expect(rec.events.length).toBe(whole.length);
          const full = await readRecording(join(root, 'live'));
          expect(rec.events).toEqual(full.events.slice(0, whole.length));
          expect(rec.warnings.some((warning) => warning.includes('cut-off last line'))).toBe(partial.length > 0);
        },
      ),
      { numRuns: 40 },
    );
  });
});
