import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyFirstWrite } from '../../src/record/preload/record-sockets.mjs';
import { dbRepliesByConnection, dbReplyEntry, pgFirstMessage, pgReplyReader } from './shared-pg-replies.mjs';

/** A backend message: type byte, length, body. */
const message = (type: string, body = Buffer.alloc(0)) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const startup = () => {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(16, 0);
  b.writeUInt32BE(196608, 4);
  return b;
};
const sslRequest = () => {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(8, 0);
  b.writeUInt32BE(80877103, 4);
  return b;
};
const ready = () => message('Z', Buffer.from('I'));
// A reply whose body holds a 'Z' byte: only a message's type counts.
const rows = () => message('D', Buffer.from('ZZZZ\x00Z'));

/** A client's untyped first message: length (which counts itself), code, then the rest. */
const first = (length: number, code: number, rest = Buffer.alloc(0)) => {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(length >>> 0, 0);
  b.writeUInt32BE(code >>> 0, 4);
  return Buffer.concat([b, rest]);
};
const CODES = [196608, 196610, 196863, 131072, 80877103, 80877104, 80877102, 80877105, 0, 0xffffffff];
/** Arbitrary first writes, most of them shaped like a client's first message with hostile lengths. */
const firstWrites = fc.oneof(
  fc.uint8Array({ maxLength: 24 }),
  fc
    .tuple(
      fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.constantFrom(7, 8, 9999, 10_000, 0x80000000, 0xffffffff)),
      fc.oneof(fc.constantFrom(...CODES), fc.nat()),
      fc.uint8Array({ maxLength: 16 }),
      fc.nat({ max: 40 }),
    )
    .map(([length, code, rest, cut]) => new Uint8Array(first(length, code, Buffer.from(rest)).subarray(0, cut))),
);

describe('pgFirstMessage: what a first write is, if Postgres', () => {
  it.each([
    ['a startup, protocol 3.0', first(40, 196608, Buffer.from('user\0me\0\0')), 'startup'],
    ['a startup, protocol 3.2', first(40, 196610, Buffer.from('user\0me\0\0')), 'startup'],
    ['an SSL request', first(8, 80877103), 'encryption'],
    ['a GSS request', first(8, 80877104), 'encryption'],
    ['an SSL request with bytes a server reads past', first(12, 80877103, Buffer.alloc(4)), 'encryption'],
    ['a cancel', first(16, 80877102, Buffer.alloc(8)), 'cancel'],
    ['protocol 2.0, which no server speaks now', first(40, 131072), undefined],
    ['a length shorter than the message head', first(7, 196608), undefined],
    ['a length no server takes', first(10_000, 196608), undefined],
    ['a length that is negative as int32', first(0x80000000, 196608), undefined],
    ['an unknown code', first(8, 80877105), undefined],
    ['seven bytes', first(8, 80877103).subarray(0, 7), undefined],
    ['an HTTP request', Buffer.from('GET / HTTP/1.1\r\n\r\n'), undefined],
  ])('%s', (_name, bytes, expected) => {
    expect(pgFirstMessage(bytes)).toBe(expected);
  });

  it('reads only the first 8 bytes of any write, cut anywhere', () => {
    fc.assert(
      fc.property(firstWrites, fc.uint8Array({ maxLength: 16 }), (bytes, tail) => {
        const kind = pgFirstMessage(bytes);
        expect([undefined, 'startup', 'encryption', 'cancel']).toContain(kind);
        if (bytes.length < 8) expect(kind).toBeUndefined();
        else expect(pgFirstMessage(Buffer.concat([bytes, tail]))).toBe(kind);
        // A view into a larger buffer reads its own bytes.
        const padded = new Uint8Array(bytes.length + 3);
        padded.set(bytes, 3);
        expect(pgFirstMessage(padded.subarray(3))).toBe(kind);
      }),
      { numRuns: 500 },
    );
  });

  it('is what both of its users go by: the recorder names a connection Postgres, the reply reader follows it', () => {
    fc.assert(
      fc.property(firstWrites, (bytes) => {
        const kind = pgFirstMessage(bytes);
        const named = classifyFirstWrite(Buffer.from(bytes).toString('latin1'), false, 'h:1');
        expect(named?.kind === 'postgres').toBe(kind !== undefined);
        const reader = pgReplyReader();
        reader.client(Buffer.from(bytes));
        expect(reader.off).toBe(kind !== 'startup' && kind !== 'encryption');
      }),
      { numRuns: 500 },
    );
  });
});

describe('pgReplyReader', () => {
  it('finds every ReadyForQuery end however the bytes are cut', () => {
    const stream = Buffer.concat([
      message('R', Buffer.alloc(4)),
      ready(),
      rows(),
      message('C', Buffer.from('SELECT 1\0')),
      ready(),
      ready(),
    ]);
    const expected = [15, stream.length - 6, stream.length];
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 6 }), (cuts) => {
        const reader = pgReplyReader();
        reader.client(startup());
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const found: number[] = [];
        let from = 0;
        for (const to of [...points, stream.length]) {
          for (const end of reader.server(stream.subarray(from, to))) found.push(from + end);
          from = to;
        }
        expect(found).toEqual(expected);
      }),
    );
  });

  it("reads past a refused SSL request's one byte, and stops at TLS or anything not Postgres", () => {
    const plain = pgReplyReader();
    plain.client(sslRequest());
    expect(plain.server(Buffer.concat([Buffer.from('N'), ready()]))).toEqual([7]);
    const tls = pgReplyReader();
    tls.client(sslRequest());
    expect(tls.server(Buffer.concat([Buffer.from('S'), ready()]))).toEqual([]);
    expect(tls.off).toBe(true);
    const http = pgReplyReader();
    http.client(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(http.off).toBe(true);
    expect(http.server(ready())).toEqual([]);
    const text = pgReplyReader();
    text.client('a string');
    expect(text.off).toBe(true);
  });

  it('stops reading a stream whose lengths make no sense', () => {
    const reader = pgReplyReader();
    reader.client(startup());
    const bad = Buffer.from([0x5a, 0, 0, 0, 2]);
    expect(reader.server(Buffer.concat([bad, ready()]))).toEqual([]);
    expect(reader.off).toBe(true);
  });
});

describe('dbReply values', () => {
  it('round-trip: by connection, in the order recorded, with the counts drawn', () => {
    const values = [
      dbReplyEntry('127.0.0.1:5432#1', { clock: 0 }),
      dbReplyEntry('127.0.0.1:5432#0', { clock: 2, uuid: 1 }),
      dbReplyEntry('w1/db:5432#0', { random: 3 }),
      dbReplyEntry('127.0.0.1:5432#1', { clock: 4 }),
    ];
    expect(values[1]).toBe('127.0.0.1:5432#0 clock=2 uuid=1');
    const { byConnection, total } = dbRepliesByConnection(values);
    expect(total).toBe(4);
    expect(byConnection.get('127.0.0.1:5432#1')).toEqual([
      { index: 0, need: {} },
      { index: 3, need: { clock: 4 } },
    ]);
    expect(byConnection.get('w1/db:5432#0')).toEqual([{ index: 2, need: { random: 3 } }]);
  });

  it('leaves out what a hostile recording puts there', () => {
    const { byConnection, total } = dbRepliesByConnection([
      42,
      null,
      { conn: 'x' },
      '',
      'a b',
      '127.0.0.1:5432#0 __proto__=2 clock=5',
      '127.0.0.1:5432#0 constructor=1 clock=1',
      `${'x'.repeat(400)} clock=1`,
      '127.0.0.1:5432#0 clock=99999999999999999999',
    ]);
    expect(total).toBe(1);
    const [entry] = byConnection.get('127.0.0.1:5432#0') ?? [];
    expect(entry?.need).toEqual({ clock: 1 });
    expect(Object.getPrototypeOf(entry?.need)).toBe(Object.prototype);
    expect(dbRepliesByConnection('not a list').total).toBe(0);
  });
});
