// Builds small recordings of a travel-desk run with the recording library's writer (validated, read back).
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import {
  type AppendInput,
  createRecordingWriter,
  type DbChangedPayload,
  type DbSnapshot,
  type FsChangedPayload,
  type FsSnapshot,
  type Recording,
  type RecordingEvent,
  readRecording,
  type StateType,
  worldAt,
} from '../../src/recording/index.js';

export interface ToolStepSpec {
  name: string;
  stateType?: StateType;
  args: unknown;
  result?: unknown;
  error?: { code: string; message: string };
  mutating?: boolean;
  status?: number;
  db?: Array<Omit<DbChangedPayload, 'schema'> & { schema?: string }>;
  files?: Array<{ path: string; content?: string }>;
  /** The tool step it is nested under (its parentStepId), instead of the last THINK step: part of that step's work. */
  parentStep?: number;
}

/** A run under construction: model steps and the tool steps they request. */
export class RunBuilder {
  private events: Array<Omit<RecordingEvent, 'seq' | 'traceId' | 'time'>> = [];
  private step = 0;
  private messages: unknown[] = [];
  private blobs = new Map<string, Buffer>();
  private lastThink = 0;
  fs: FsSnapshot = { files: {} };
  constructor(
    readonly system: string,
    readonly task: string,
    readonly db: DbSnapshot | undefined,
  ) {
    this.messages = [
      { role: 'system', content: system },
      { role: 'user', content: task },
    ];
  }

  /** A THINK step deciding tool calls (the tool steps follow), or a FINALIZE step answering `text`. */
  model(toolCalls: Array<{ name: string; args: unknown }>, text?: string): this {
    const step = ++this.step;
    const calls = toolCalls.map((c, i) => ({
      id: `call_${step}_${i}`,
      name: c.name,
      arguments: JSON.stringify(c.args),
    }));
    const stateType: StateType = calls.length > 0 ? 'THINK' : 'FINALIZE';
    this.push(step, 'step.started', { stateType, name: `model ${stateType.toLowerCase()}` });
    this.push(step, 'model.called', {
      provider: 'openai',
      api: 'chat.completions',
      model: 'fake-gpt',
      streamed: false,
      system: this.system,
      messages: structuredClone(this.messages),
      output: text === undefined ? { toolCalls: calls } : { text, toolCalls: calls },
      latencyMs: 5,
    });
    this.push(step, 'step.completed', { status: 'success', latencyMs: 5 });
    this.messages.push(
      calls.length > 0
        ? {
            role: 'assistant',
            content: text ?? null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : { role: 'assistant', content: text ?? '' },
    );
    this.lastThink = step;
    return this;
  }

  /** A tool step requested by the last THINK step; its result goes back into the model's context. */
  tool(spec: ToolStepSpec): this {
    const step = ++this.step;
    const parent = spec.parentStep ?? this.lastThink;
    const stateType = spec.stateType ?? 'API_CALL';
    this.push(step, 'step.started', { stateType, name: spec.name }, parent);
    const exchangeId = `x${step}`;
    const status = spec.status ?? (spec.error ? 500 : 200);
    const body = JSON.stringify(spec.result ?? spec.error ?? {});
    this.push(
      step,
      'tool.called',
      {
        exchangeId,
        kind: 'http',
        name: spec.name,
        stateType,
        args: spec.args,
        ...(spec.result === undefined ? {} : { result: spec.result }),
        ...(spec.error ? { error: spec.error } : {}),
        mutating: spec.mutating ?? false,
        latencyMs: 3,
      },
      parent,
    );
    this.push(
      step,
      'http.exchange',
      {
        exchangeId,
        request: { method: spec.mutating ? 'POST' : 'GET', url: `http://127.0.0.1:4100/${spec.name}`, headers: {} },
        response: { status, headers: { 'content-type': 'application/json' }, body: { size: body.length, text: body } },
        startedAt: '2026-11-24T10:00:00.000Z',
        durationMs: 3,
      },
      parent,
    );
    for (const change of spec.db ?? []) this.push(step, 'db.changed', { schema: 'public', ...change }, parent);
    for (const file of spec.files ?? []) {
      const before = this.fs.files[file.path];
      const change: FsChangedPayload =
        file.content === undefined
          ? { path: file.path, op: 'delete', ...(before ? { before } : {}) }
          : {
              path: file.path,
              op: before ? 'modify' : 'create',
              ...(before ? { before } : {}),
              after: this.putFile(file.content),
            };
      this.push(step, 'fs.changed', change, parent);
    }
    this.push(
      step,
      'step.completed',
      status < 400 && !spec.error
        ? { status: 'success', latencyMs: 3 }
        : { status: 'error', latencyMs: 3, errorType: 'http' },
      parent,
    );
    // A nested step's result goes to the step it is part of, not to the model.
    if (spec.parentStep === undefined)
      this.messages.push({ role: 'tool', tool_call_id: `call_${parent}_0`, content: body });
    return this;
  }

  /** A file present before the run. */
  preFile(path: string, content: string): this {
    this.fs.files[path] = this.putFile(content);
    return this;
  }

  private putFile(content: string): { mode: number; size: number; sha256: string } {
    const bytes = Buffer.from(content);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    this.blobs.set(sha256, bytes);
    return { mode: 0o644, size: bytes.length, sha256 };
  }

  private push(stepId: number, type: RecordingEvent['type'], payload: unknown, parentStepId?: number): void {
    const event = { stepId, type, payload, ...(parentStepId ? { parentStepId } : {}) } as Omit<
      RecordingEvent,
      'seq' | 'traceId' | 'time'
    >;
    this.events.push(event);
  }

  /**
   * Writes the run with the recording library's writer (run.started/run.completed added, pre and post
   * snapshots) and reads it back with readRecording, as every engine will see it.
   */
  async build(id = 'run-1', extra: { replayOf?: string } = {}): Promise<Recording> {
    const dir = join(fixtureRoot(), `${id}-${++built}`);
    const writer = await createRecordingWriter(dir, {
      id,
      name: id,
      agent: { command: ['node', 'agent.mjs'], cwd: '/agent' },
      ...(extra.replayOf ? { replayOf: extra.replayOf } : {}),
    });
    for (const bytes of this.blobs.values()) writer.putBlob(bytes);
    const pre = this.db
      ? { fs: structuredClone(this.fs), db: structuredClone(this.db) }
      : { fs: structuredClone(this.fs) };
    writer.writeSnapshot('pre', pre);
    const all = [
      { stepId: 0, type: 'run.started', payload: { command: ['node', 'agent.mjs'], cwd: '/agent' } },
      ...this.events,
      { stepId: 0, type: 'run.completed', payload: { status: 'complete', exitCode: 0 } },
    ] as Array<Omit<RecordingEvent, 'seq' | 'traceId' | 'time'>>;
    for (const event of all) writer.append(event as AppendInput);
    writer.writeSnapshot(
      'post',
      worldAt(
        { events: all.map((e, seq) => ({ ...e, seq, traceId: 't', time: '' }) as RecordingEvent), pre },
        this.step,
      ),
    );
    await writer.close('complete');
    return readRecording(dir);
  }
}

let root: string | undefined;
let built = 0;
/**
 * One temp folder per test file for the fixtures' recordings, removed after the file's tests.
 * (Removed at the process's exit it stayed behind: vitest ends its workers without that event.)
 */
function fixtureRoot(): string {
  root ??= mkdtempSync(join(tmpdir(), 'tapedeck-bisect-fixtures-'));
  return root;
}
// Registered while the importing test file is collected: its own afterAll.
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** The travel desk's database before the run. */
export function travelDb(): DbSnapshot {
  return {
    schemas: ['public'],
    ddl: [
      'CREATE TABLE public.flights (id text PRIMARY KEY, destination text NOT NULL, price integer NOT NULL, seats integer NOT NULL)',
      'CREATE TABLE public.bookings (id text PRIMARY KEY, flight_id text NOT NULL REFERENCES public.flights(id), passenger text NOT NULL, status text NOT NULL)',
    ],
    tables: [
      {
        schema: 'public',
        name: 'flights',
        columns: [
          { name: 'id', type: 'text', nullable: false },
          { name: 'destination', type: 'text', nullable: false },
          { name: 'price', type: 'integer', nullable: false },
          { name: 'seats', type: 'integer', nullable: false },
        ],
        primaryKey: ['id'],
        rows: [
          { id: 'FL100', destination: 'Denver', price: 280, seats: 0 },
          { id: 'FL200', destination: 'Denver', price: 310, seats: 4 },
        ],
      },
      {
        schema: 'public',
        name: 'bookings',
        columns: [
          { name: 'id', type: 'text', nullable: false },
          { name: 'flight_id', type: 'text', nullable: false },
          { name: 'passenger', type: 'text', nullable: false },
          { name: 'status', type: 'text', nullable: false },
        ],
        primaryKey: ['id'],
        rows: [],
      },
    ],
  };
}

const SYSTEM = 'You are a travel desk agent. Book flights with the tools.';
const TASK = 'Book Ana Lopez on the cheapest flight to Denver.';
const SEARCH = {
  flights: [
    { id: 'FL100', price: 280, seats: 0 },
    { id: 'FL200', price: 310, seats: 4 },
  ],
};

/** Steps 1-4 shared by the baseline and the fixed run: search, then a booking of sold-out FL100 that fails. */
function soldOutAttempt(): RunBuilder {
  return new RunBuilder(SYSTEM, TASK, travelDb())
    .model([{ name: 'search_flights', args: { destination: 'Denver' } }])
    .tool({ name: 'search_flights', args: { destination: 'Denver' }, result: SEARCH })
    .model([{ name: 'book_flight', args: { flight_id: 'FL100', passenger: 'Ana Lopez' } }])
    .tool({
      name: 'book_flight',
      args: { flight_id: 'FL100', passenger: 'Ana Lopez' },
      mutating: true,
      status: 409,
      error: { code: 'SOLD_OUT', message: 'flight FL100 has no seats' },
    });
}

/**
 * The baseline run: FL100 is sold out; booking it fails with 409, yet the agent tells the user it booked
 * it (a claim the world never bears out) — the belief diverges at step 5.
 */
export function baselineRun(): Promise<Recording> {
  return soldOutAttempt()
    .model([], 'I booked Ana Lopez on flight FL100 to Denver. Have a good trip!')
    .build('baseline');
}

/** The fixed run: after the 409 the agent books FL200, which works, and says so. */
export function fixedRun(): Promise<Recording> {
  return soldOutAttempt()
    .model([{ name: 'book_flight', args: { flight_id: 'FL200', passenger: 'Ana Lopez' } }])
    .tool({
      name: 'book_flight',
      args: { flight_id: 'FL200', passenger: 'Ana Lopez' },
      mutating: true,
      result: { booking_id: 'BK-1', status: 'confirmed' },
      db: [
        {
          table: 'bookings',
          op: 'insert',
          key: { id: 'BK-1' },
          after: { id: 'BK-1', flight_id: 'FL200', passenger: 'Ana Lopez', status: 'confirmed' },
        },
      ],
    })
    .model([], 'FL100 was sold out, so I booked Ana Lopez on FL200 instead; confirmation BK-1.')
    .build('fixed', { replayOf: 'baseline' });
}

/**
 * A long run of `n` steps: grounded weather look-ups, then at `badAt` an action on an id nobody
 * mentioned (a hallucinated flight), then more look-ups. Steps alternate THINK / tool.
 */
export function longRun(n: number, badAt: number | undefined): Promise<Recording> {
  const cities = Array.from({ length: n }, (_, i) => `C${i + 1}`).join(', ');
  const b = new RunBuilder(SYSTEM, `Check the weather in cities ${cities}, then report.`, travelDb());
  let step = 0;
  let city = 1;
  while (step < n) {
    if (step + 1 === n) {
      b.model([], 'Weather checked.');
      step++;
      break;
    }
    const bad = badAt !== undefined && (step + 2 === badAt || step + 1 === badAt);
    const args = bad ? { flight_id: 'FL999' } : { city: `C${city}` };
    const name = bad ? 'flight_status' : 'weather';
    b.model([{ name, args }]);
    b.tool({ name, args, result: { ok: true } });
    step += 2;
    city++;
  }
  return b.build(`long-${n}`);
}

/** The agent books FL200 twice with the same arguments: the second booking is a repeated mutation at step 6. */
export function doubleBookingRun(): Promise<Recording> {
  const booking = (id: string) => ({
    table: 'bookings',
    op: 'insert' as const,
    key: { id },
    after: { id, flight_id: 'FL200', passenger: 'Ana Lopez', status: 'confirmed' },
  });
  return new RunBuilder(SYSTEM, TASK, travelDb())
    .model([{ name: 'search_flights', args: { destination: 'Denver' } }])
    .tool({ name: 'search_flights', args: { destination: 'Denver' }, result: SEARCH })
    .model([{ name: 'book_flight', args: { flight_id: 'FL200', passenger: 'Ana Lopez' } }])
    .tool({
      name: 'book_flight',
      args: { flight_id: 'FL200', passenger: 'Ana Lopez' },
      mutating: true,
      result: { booking_id: 'BK-1' },
      db: [booking('BK-1')],
    })
    .model([{ name: 'book_flight', args: { flight_id: 'FL200', passenger: 'Ana Lopez' } }])
    .tool({
      name: 'book_flight',
      args: { flight_id: 'FL200', passenger: 'Ana Lopez' },
      mutating: true,
      result: { booking_id: 'BK-2' },
      db: [booking('BK-2')],
    })
    .model([], 'Ana Lopez is booked on FL200 (BK-1).')
    .build('double');
}

/** The agent writes an itinerary file naming a flight it made up (FL999) at step 4. */
export function itineraryRun(): Promise<Recording> {
  return new RunBuilder(SYSTEM, TASK, travelDb())
    .preFile('notes.txt', 'travel notes\n')
    .model([{ name: 'search_flights', args: { destination: 'Denver' } }])
    .tool({ name: 'search_flights', args: { destination: 'Denver' }, result: SEARCH })
    .model([{ name: 'write_file', args: { path: 'itinerary.md' } }])
    .tool({
      name: 'write_file',
      stateType: 'FILE_WRITE',
      args: { path: 'itinerary.md' },
      mutating: true,
      result: { ok: true },
      files: [{ path: 'itinerary.md', content: 'Ana Lopez: FL999 to Denver\n' }],
    })
    .model([], 'Wrote itinerary.md.')
    .build('itinerary');
}

/**
 * The agent stores boarding passes as bytea (one is there before the run): step 4 writes an empty
 * pass for BK-1. Values are in the snapshot's form: bytea as "\\x" and hex.
 */
export function boardingPassRun(): Promise<Recording> {
  const db = travelDb();
  db.tables.push({
    schema: 'public',
    name: 'boarding_passes',
    columns: [
      { name: 'booking_id', type: 'text', nullable: false },
      { name: 'pass', type: 'bytea', nullable: false },
    ],
    primaryKey: ['booking_id'],
    rows: [{ booking_id: 'BK-0', pass: '\\x504153530a' }],
  });
  return new RunBuilder(SYSTEM, TASK, db)
    .model([{ name: 'issue_pass', args: { booking_id: 'BK-1' } }])
    .tool({ name: 'issue_pass', args: { booking_id: 'BK-1' }, result: { ok: true } })
    .model([{ name: 'issue_pass', args: { booking_id: 'BK-1' } }])
    .tool({
      name: 'issue_pass',
      args: { booking_id: 'BK-1' },
      mutating: true,
      result: { ok: true },
      db: [
        {
          table: 'boarding_passes',
          op: 'insert',
          key: { booking_id: 'BK-1' },
          after: { booking_id: 'BK-1', pass: '\\x' },
        },
      ],
    })
    .model([], 'Pass issued.')
    .build('passes');
}
