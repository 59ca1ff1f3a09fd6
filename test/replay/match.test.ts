// Layered request matching over a recording made by the writer: exact, normalised, structural,
// repeats in recorded order, and misses that explain themselves.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Recording, readRecording } from '../../src/recording/index.js';
import {
  CallIndex,
  canonical,
  explainMiss,
  indexRecording,
  keysOf,
  type LiveRequest,
  type RecordedCall,
} from '../../src/replay/index.js';
import { LocalSteps } from '../../src/replay/match.js';
import { writeRecording } from './build.js';

let tmp: string;
let index: () => CallIndex;

const API = 'http://127.0.0.1:8787';
const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-test',
  messages: [
    { role: 'system', content: 'You are a test.' },
    { role: 'user', content },
  ],
  ...extra,
});
const req = (method: string, url: string, body?: unknown): LiveRequest => ({
  method,
  url,
  headers: {},
  ...(body === undefined ? {} : { bodyText: typeof body === 'string' ? body : JSON.stringify(body) }),
});

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-match-'));
  const dir = await writeRecording(path.join(tmp, 'rec'), {
    calls: [
      {
        kind: 'model',
        url: `${API}/v1/chat/completions`,
        body: chat('book', { temperature: 0 }),
        response: { id: 'a' },
      },
      { kind: 'tool', url: `${API}/flights?to=DEN&date=2026-11-25`, response: [{ id: 'FL-1' }] },
      {
        kind: 'tool',
        url: `${API}/bookings`,
        body: { flight_id: 'FL-1', passenger_id: 'P-1' },
        response: { id: 'BK-1' },
      },
      { kind: 'tool', url: `${API}/flights?to=DEN&date=2026-11-25`, response: [{ id: 'FL-2' }] },
      {
        kind: 'tool',
        url: `${API}/mcp`,
        body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'lookup', arguments: { q: 'x' } } },
        response: { jsonrpc: '2.0', id: 7, result: {} },
      },
    ],
  });
  const recording = await readRecording(dir);
  index = () => new CallIndex(indexRecording(recording));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('layered matching', () => {
  it('hashes no match key until it matches by key (a replay its preload answers by index never does)', () => {
    const calls = index().calls;
    let read = 0;
    for (const call of calls) {
      const keys = call.keys;
      Object.defineProperty(call, 'keys', {
        get: () => {
          read++;
          return keys;
        },
      });
    }
    const i = new CallIndex(calls);
    const first = i.nextExpected();
    if (first) i.markUsed(first);
    expect([read, i.unused().length]).toEqual([0, calls.length - 1]);
    const m = i.match(req('POST', `${API}/bookings`, { flight_id: 'FL-1', passenger_id: 'P-1' }));
    expect([m.layer, m.call?.step]).toEqual(['exact', 3]);
    expect(read).toBeGreaterThan(0);
  });

  it('matches an identical request at the exact layer', () => {
    const m = index().match(req('POST', `${API}/bookings`, { flight_id: 'FL-1', passenger_id: 'P-1' }));
    expect(m.layer).toBe('exact');
    expect(m.call?.step).toBe(3);
  });

  it('matches after normalisation: key order, query order, another host and declared volatile fields', () => {
    const i = index();
    const reordered = i.match(
      req('POST', 'http://10.0.0.9:9/bookings', '{ "passenger_id": "P-1", "flight_id": "FL-1", "request_id": "r-42" }'),
    );
    expect(reordered.layers.map((l) => [l.layer, l.passed])).toEqual([
      ['exact', false],
      ['normalised', true],
    ]);
    expect(reordered.layer).toBe('normalised');
    expect(reordered.call?.step).toBe(3);
    const query = i.match(req('GET', `${API}/flights?date=2026-11-25&to=DEN&request_id=9`));
    expect([query.layer, query.call?.step]).toEqual(['normalised', 2]);
    // A JSON-RPC id is volatile: the same tools/call with another id is the same request.
    const rpc = i.match(
      req('POST', `${API}/mcp`, {
        jsonrpc: '2.0',
        id: 99,
        method: 'tools/call',
        params: { name: 'lookup', arguments: { q: 'x' } },
      }),
    );
    expect([rpc.layer, rpc.call?.step]).toEqual(['normalised', 5]);
  });

  it('matches a model call structurally when only sampling parameters differ', () => {
    const m = index().match(
      req('POST', `${API}/v1/chat/completions`, chat('book', { temperature: 0.7, max_tokens: 50 })),
      {
        kind: 'model',
      },
    );
    expect(m.layer).toBe('structural');
    expect(m.call?.step).toBe(1);
    expect(m.fieldDiff.map((d) => d.path).sort()).toEqual(['body.max_tokens', 'body.temperature']);
    // A model call must be identical to be served in counterfactual mode: stop at the normalised layer.
    expect(
      index().match(req('POST', `${API}/v1/chat/completions`, chat('book', { temperature: 0.7 })), {
        maxLayer: 'normalised',
      }).call,
    ).toBeUndefined();
  });

  it('serves repeats in recorded order, and a read again once every recorded answer was served', () => {
    const i = index();
    const search = req('GET', `${API}/flights?to=DEN&date=2026-11-25`);
    const first = i.match(search);
    expect(first.call?.step).toBe(2);
    i.markUsed(first.call!);
    const second = i.match(search);
    expect(second.call?.step).toBe(4);
    i.markUsed(second.call!);
    expect(i.match(search).call).toBeUndefined();
    const again = i.match(search, { allowReuse: true });
    expect([again.reused, again.call?.step]).toEqual([true, 2]);
    // A mutating call is never served twice.
    const book = req('POST', `${API}/bookings`, { flight_id: 'FL-1', passenger_id: 'P-1' });
    i.markUsed(i.match(book).call!);
    expect(i.match(book, { allowReuse: true }).call).toBeUndefined();
  });

  it('explains a miss: the layers tried, the nearest recorded request and the differing fields', () => {
    const live = req('POST', `${API}/bookings`, { flight_id: 'FL-9', passenger_id: 'P-1' });
    const m = index().match(live);
    expect(m.call).toBeUndefined();
    expect(m.layers.every((l) => !l.passed)).toBe(true);
    expect(m.nearest?.step).toBe(3);
    expect(m.fieldDiff).toEqual([{ path: 'body.flight_id', expected: 'FL-1', actual: 'FL-9' }]);
    const text = explainMiss(live, m);
    expect(text).toContain('Nearest recorded request: step 3 POST http://127.0.0.1:8787/bookings');
    expect(text).toContain('body.flight_id: expected "FL-1", got "FL-9"');
  });
});

describe('the served-call cursors', () => {
  it('give the same next call and the same match as scanning every call, whatever order calls are served in', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 4 }), { maxLength: 12 }), (order) => {
        const ix = index();
        const served = new Set<number>();
        for (const i of order) {
          const call = ix.calls[i];
          if (!call) continue;
          ix.markUsed(call);
          served.add(i);
          const free = ix.calls.filter((c) => !served.has(c.index));
          expect(ix.nextExpected()?.index).toBe(free[0]?.index);
          expect(ix.nextExpected('tool')?.index).toBe(free.find((c) => c.kind === 'tool')?.index);
          expect(ix.nextExpected('model')?.index).toBe(free.find((c) => c.kind === 'model')?.index);
          // The repeated read: the first of its two recorded answers not yet served, then a reuse.
          const m = ix.match(req('GET', `${API}/flights?to=DEN&date=2026-11-25`), { allowReuse: true });
          const firstFree = [1, 3].find((k) => !served.has(k));
          expect(m.call?.index).toBe(firstFree ?? 1);
          expect(m.reused).toBe(firstFree === undefined);
          expect(m.layers[0]?.candidates).toBe(2);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('the recorded local steps', () => {
  it('gives the events of a gap as filtering the whole recording does, in recorded order', () => {
    const types = ['step.started', 'tool.called', 'fs.changed', 'step.completed'] as const;
    fc.assert(
      fc.property(
        fc.array(fc.record({ step: fc.integer({ min: 0, max: 12 }), type: fc.constantFrom(...types) }), {
          maxLength: 60,
        }),
        fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 4 }),
        fc.integer({ min: -1, max: 13 }),
        fc.integer({ min: 0, max: 14 }),
        (raw, callSteps, after, before) => {
          const events = raw.map((e, seq) => ({ seq, stepId: e.step, type: e.type, payload: {} }));
          const recording = { events } as unknown as Recording;
          const calls = callSteps.map((step) => ({ step }) as RecordedCall);
          const isCall = new Set(callSteps);
          const expected = events.filter(
            (e) =>
              e.stepId > after &&
              e.stepId < before &&
              !isCall.has(e.stepId) &&
              (e.type === 'step.started' || e.type === 'tool.called' || e.type === 'step.completed'),
          );
          expect(new LocalSteps(recording, calls).between(after, before)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('normalisation', () => {
  it('gives the same normalised key whatever the key order and whitespace of a JSON body', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
        fc.boolean(),
        (obj, pretty) => {
          const shuffled = Object.fromEntries(Object.entries(obj).reverse());
          const a = keysOf(req('POST', `${API}/x`, JSON.stringify(obj)));
          const b = keysOf(req('POST', `${API}/x`, JSON.stringify(shuffled, null, pretty ? 2 : 0)));
          expect(b.normalised).toBe(a.normalised);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads a multipart body with one boundary, whatever the client drew, and still tells its parts apart', () => {
    // A multipart body as the clients write it: fetch's FormData (`----formdata-undici-0<digits>`)
    // or the `form-data` package (`--------------------------<24 digits>`), quoted or not.
    const upload = (boundary: string, quoted: boolean, field: string, file: string): LiveRequest => ({
      method: 'POST',
      url: `${API}/v1/files`,
      headers: { 'Content-Type': `multipart/form-data; boundary=${quoted ? `"${boundary}"` : boundary}` },
      bodyText: [
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${field}\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n${file}\r\n`,
        `--${boundary}--\r\n`,
      ].join(''),
    });
    const boundary = fc.oneof(
      fc.stringMatching(/^[0-9]{11}$/).map((d) => `----formdata-undici-0${d}`),
      fc.stringMatching(/^[0-9]{24}$/).map((d) => `--------------------------${d}`),
    );
    fc.assert(
      fc.property(
        boundary,
        boundary,
        fc.boolean(),
        fc.string(),
        fc.string(),
        fc.string(),
        (b1, b2, quoted, field, file, other) => {
          const a = keysOf(upload(b1, quoted, field, file));
          expect(keysOf(upload(b2, !quoted, field, file))).toEqual(a);
          if (other !== file) expect(keysOf(upload(b2, quoted, field, other)).exact).not.toBe(a.exact);
          if (other !== field) expect(keysOf(upload(b2, quoted, other, file)).exact).not.toBe(a.exact);
        },
      ),
      { numRuns: 200 },
    );
    // Only a multipart body's boundary: the same text under another content type is the body itself.
    const text = upload('----formdata-undici-01', false, 'x', 'y');
    const plain = (r: LiveRequest): LiveRequest => ({ ...r, headers: { 'content-type': 'text/plain' } });
    expect(keysOf(plain(text)).exact).not.toBe(keysOf(plain(upload('----formdata-undici-02', false, 'x', 'y'))).exact);
  });

  it('sorts object keys at every depth in canonical JSON', () => {
    expect(canonical({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });
});
