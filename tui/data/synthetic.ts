// A synthetic Recording built in memory, shaped as the recorder writes one (THINK model calls
// that request a tool, tool steps that change the world, a FINALIZE). For component tests and
// the bench, where a 10,000-step recording is needed without running an agent for an hour.
import { createHash } from 'node:crypto';
import type { DbSnapshot, FsSnapshot, Manifest, Recording, RecordingEvent } from '../../src/recording/index.js';

export interface SyntheticOptions {
  steps: number;
  name?: string;
  /** Step that fails (tool error), if any. */
  failAt?: number;
  /** Steps that carry a replay divergence. */
  divergeAt?: number[];
  /** System prompt of every model call, or of each model call's step. */
  system?: string | ((step: number) => string);
  /** Tool name of tool steps from `toolSwitchAt` on (to make a replay that takes another path). */
  toolSwitchAt?: number;
  replayOf?: string;
  dir?: string;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

export function syntheticRecording(options: SyntheticOptions): Recording {
  const traceId = `trace-${options.name ?? 'synthetic'}`;
  const events: RecordingEvent[] = [];
  const blobs = new Map<string, Buffer>();
  let seq = 0;
  const t0 = Date.parse('2026-11-24T10:00:00.000Z');
  const time = (ms: number) => new Date(t0 + ms).toISOString();
  const push = (e: Omit<RecordingEvent, 'seq' | 'traceId' | 'time'> & { time?: string }) => {
    events.push({ seq: seq++, traceId, time: e.time ?? time(seq * 10), ...e } as RecordingEvent);
  };
  const systemOf = (step: number) =>
    typeof options.system === 'function'
      ? options.system(step)
      : (options.system ?? 'You are a travel desk agent. Book only flights you have seen.');
  push({ type: 'run.started', stepId: 0, payload: { command: ['node', 'agent.mjs'], cwd: '/work/world' } });
  const booked: Array<{ id: number; flight: string; status: string }> = [];
  let lastThink = 0;
  for (let step = 1; step <= options.steps; step++) {
    const last = step === options.steps;
    const think = last || step % 2 === 1;
    if (think) {
      const stateType = last ? 'FINALIZE' : 'THINK';
      lastThink = step;
      push({ type: 'step.started', stepId: step, payload: { stateType, name: 'gpt-4o-mini' } });
      const history = Math.min(step, 6);
      push({
        type: 'model.called',
        stepId: step,
        payload: {
          provider: 'openai',
          api: 'chat.completions',
          model: 'gpt-4o-mini',
          streamed: step % 4 === 1,
          messages: [
            { role: 'system', content: systemOf(step) },
            { role: 'user', content: 'Book the cheapest flight from SFO to JFK on 2026-12-01.' },
            ...Array.from({ length: history }, (_, i) => ({
              role: 'tool',
              tool_call_id: `c${i}`,
              content: `{"flights":[{"id":"UA${100 + i}","price":${200 + i}}]}`,
            })),
          ],
          output: last
            ? { text: `Booked flight UA101, booking ${booked.length}.`, toolCalls: [] }
            : {
                toolCalls: [
                  {
                    id: `call_${step}`,
                    name:
                      options.toolSwitchAt !== undefined && step >= options.toolSwitchAt
                        ? 'cancel_booking'
                        : step % 3 === 0
                          ? 'book_flight'
                          : 'search_flights',
                    arguments: JSON.stringify({ from: 'SFO', to: 'JFK', step }),
                  },
                ],
              },
          stopReason: last ? 'stop' : 'tool_calls',
          usage: { inputUncached: 300 + step, cacheRead: 1200, cacheWrite: 0, output: 40 + (step % 7), reasoning: 0 },
          latencyMs: 300 + (step % 50),
        },
      });
      push({ type: 'step.completed', stepId: step, payload: { status: 'success', latencyMs: 310 + (step % 50) } });
      continue;
    }
    const switched = options.toolSwitchAt !== undefined && step >= options.toolSwitchAt;
    const name = switched ? 'cancel_booking' : (step - 1) % 3 === 0 ? 'book_flight' : 'search_flights';
    const mutating = name !== 'search_flights';
    const stateType = mutating ? 'API_CALL' : 'RETRIEVE';
    push({ type: 'step.started', stepId: step, parentStepId: lastThink, payload: { stateType, name } });
    const failed = options.failAt === step;
    push({
      type: 'tool.called',
      stepId: step,
      parentStepId: lastThink,
      payload: {
        kind: 'http',
        name,
        stateType,
        args: { from: 'SFO', to: 'JFK', step },
        ...(failed
          ? { error: { code: 'HTTP_500', message: 'booking service unavailable' } }
          : { result: { ok: true, flight: `UA${100 + (step % 9)}` } }),
        mutating,
        latencyMs: 20 + (step % 13),
      },
    });
    if (mutating && !failed) {
      const id = booked.length + 1;
      booked.push({ id, flight: `UA${100 + (step % 9)}`, status: 'confirmed' });
      push({
        type: 'db.changed',
        stepId: step,
        payload: {
          schema: 'public',
          table: 'bookings',
          op: 'insert',
          key: { id },
          after: { id, flight: `UA${100 + (step % 9)}`, status: 'confirmed' },
        },
      });
      const content = `booking ${id}\n`;
      const hash = sha(content);
      blobs.set(hash, Buffer.from(content));
      push({
        type: 'fs.changed',
        stepId: step,
        payload: {
          path: `out/booking-${id}.txt`,
          op: 'create',
          after: { mode: 0o644, size: content.length, sha256: hash },
        },
      });
    }
    if (options.divergeAt?.includes(step)) {
      push({
        type: 'divergence',
        stepId: step,
        payload: {
          kind: 'different-request',
          message: `step ${step}: arguments differ`,
          fieldDiff: [{ path: 'body.to', expected: 'JFK', actual: 'EWR' }],
        },
      });
    }
    push({
      type: 'step.completed',
      stepId: step,
      parentStepId: lastThink,
      payload: failed
        ? { status: 'error', latencyMs: 25, errorType: 'HTTP_500' }
        : { status: 'success', latencyMs: 25 + (step % 13) },
    });
  }
  push({
    type: 'run.completed',
    stepId: 0,
    payload: { status: options.failAt ? 'failed' : 'complete', exitCode: options.failAt ? 1 : 0 },
  });

  const readme = 'travel desk\n';
  blobs.set(sha(readme), Buffer.from(readme));
  const preFs: FsSnapshot = { files: { 'README.md': { mode: 0o644, size: readme.length, sha256: sha(readme) } } };
  const table = (rows: DbSnapshot['tables'][number]['rows']): DbSnapshot => ({
    schemas: ['public'],
    ddl: ['CREATE TABLE public.bookings (id int primary key, flight text, status text)'],
    tables: [
      {
        schema: 'public',
        name: 'bookings',
        columns: [
          { name: 'id', type: 'int4', nullable: false },
          { name: 'flight', type: 'text', nullable: true },
          { name: 'status', type: 'text', nullable: true },
        ],
        primaryKey: ['id'],
        rows,
      },
    ],
  });
  const postFs: FsSnapshot = { files: { ...preFs.files } };
  for (const e of events)
    if (e.type === 'fs.changed' && e.payload.after) postFs.files[e.payload.path] = e.payload.after;
  const manifest: Manifest = {
    format: 'tapedeck.recording/v1',
    id: options.name ?? 'synthetic',
    name: options.name ?? 'synthetic',
    createdAt: time(0),
    status: options.failAt ? 'failed' : 'complete',
    agent: { command: ['node', 'agent.mjs'], cwd: '/work/world', entry: 'agent.mjs' },
    runtime: { node: 'v20.20.0', platform: 'linux', sdkVersions: { openai: '6.9.0' } },
    redaction: { rules: [], keyId: 'k1' },
    integrity: { events: events.length },
    ...(options.replayOf
      ? {
          replayOf: options.replayOf,
          replay: { mode: 'counterfactual' as const, overrides: { systemPrompt: systemOf(1) } },
        }
      : {}),
  };
  return {
    dir: options.dir ?? `/tmp/tapedeck-synthetic/${manifest.id}`,
    manifest,
    events,
    pre: { fs: preFs, db: table([]) },
    post: { fs: postFs, db: table(booked) },
    readBlob(hash: string): Buffer {
      const bytes = blobs.get(hash);
      if (!bytes) throw new Error(`no blob ${hash}`);
      return bytes;
    },
    warnings: [],
  };
}
