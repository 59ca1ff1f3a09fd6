// The WebSocket frame reader against what real peers write and what hostile bytes hold: messages
// come out whole and in order however the bytes are cut, fragmented or masked; anything that is no
// WebSocket (an extension bit, an unknown opcode, a continuation out of place, a frame over the
// limit) stops the reading once, never throws.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closePayload, frameReader, MAX_MESSAGE, serverFrame, type WsMessage } from './shared-websocket.mjs';

/** One client frame: masked (RFC 6455 5.3), its length in 7, 16 or 64 bits. */
function maskedFrame(opcode: number, fin: boolean, piece: Buffer): Buffer {
  const mask = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);
  const length = piece.length;
  const head = length < 126 ? Buffer.from([0, 0x80 | length]) : Buffer.alloc(length < 65536 ? 4 : 10);
  if (length >= 126 && length < 65536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(length, 2);
  } else if (length >= 65536) {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  head[0] = (fin ? 0x80 : 0) | opcode;
  const body = Buffer.from(piece);
  for (let i = 0; i < body.length; i++) body[i] = (body[i] as number) ^ (mask[i & 3] as number);
  return Buffer.concat([head, mask, body]);
}

/** A client's frames for `data`, masked, cut into `parts` fragments. */
function clientFrames(type: 'text' | 'binary', data: Buffer, parts: number): Buffer {
  const size = Math.max(1, Math.ceil(data.length / parts));
  const pieces = data.length === 0 ? [data] : [];
  for (let at = 0; at < data.length; at += size) pieces.push(data.subarray(at, at + size));
  return Buffer.concat(
    pieces.map((piece, i) => maskedFrame(i === 0 ? (type === 'text' ? 1 : 2) : 0, i === pieces.length - 1, piece)),
  );
}

function readAll(bytes: Buffer, cuts: number[]): { messages: WsMessage[]; errors: string[] } {
  const messages: WsMessage[] = [];
  const errors: string[] = [];
  const reader = frameReader(
    (m) => messages.push(m),
    (e) => errors.push(e),
  );
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    reader.feed(bytes.subarray(at, Math.max(at, Math.min(cut, bytes.length))));
    at = Math.max(at, Math.min(cut, bytes.length));
  }
  reader.feed(bytes.subarray(at));
  return { messages, errors };
}

describe('reading WebSocket frames', () => {
  it('gives each message whole and in order, however the bytes are cut (masked, fragmented)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            type: fc.constantFrom('text' as const, 'binary' as const),
            data: fc.uint8Array({ maxLength: 70_000 }),
            parts: fc.integer({ min: 1, max: 4 }),
          }),
          { maxLength: 5 },
        ),
        fc.array(fc.nat(300_000), { maxLength: 8 }),
        (messages, cuts) => {
          const bytes = Buffer.concat(messages.map((m) => clientFrames(m.type, Buffer.from(m.data), m.parts)));
          const read = readAll(bytes, cuts);
          expect(read.errors).toEqual([]);
          expect(read.messages.map((m) => [m.type, m.data.toString('hex')])).toEqual(
            messages.map((m) => [m.type, Buffer.from(m.data).toString('hex')]),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps a control frame between fragments in its place, and reads a close code and reason', () => {
    const ping = serverFrame('ping', Buffer.from('p'));
    const first = Buffer.from([0x01, 0x02, 0x68, 0x69]); // text, not fin: "hi"
    const last = Buffer.from([0x80, 0x01, 0x21]); // continuation, fin: "!"
    const close = serverFrame('close', closePayload(4001, 'bye now'));
    const read = readAll(Buffer.concat([first, ping, last, close]), [1, 3, 5, 9]);
    expect(read.messages.map((m) => [m.type, m.data.toString(), m.code, m.reason])).toEqual([
      ['ping', 'p', undefined, undefined],
      ['text', 'hi!', undefined, undefined],
      ['close', Buffer.concat([Buffer.from([0x0f, 0xa1]), Buffer.from('bye now')]).toString(), 4001, 'bye now'],
    ]);
  });

  it.each([
    ['an extension bit (compressed)', Buffer.from([0xc1, 0x01, 0x00])],
    ['an unknown opcode', Buffer.from([0x83, 0x00])],
    ['a continuation with no message', Buffer.from([0x80, 0x00])],
    ['a new message inside a fragmented one', Buffer.from([0x01, 0x00, 0x81, 0x00])],
    ['a frame over the limit', Buffer.from([0x82, 0x7f, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff])],
    ['HTTP, not frames', Buffer.from('HTTP/1.1 200 OK\r\n\r\n')],
  ])('stops once at %s', (_name, bytes) => {
    const read = readAll(Buffer.concat([bytes, serverFrame('text', Buffer.from('after'))]), []);
    expect(read.errors).toHaveLength(1);
    expect(read.messages.filter((m) => m.type === 'text' && m.data.toString() === 'after')).toEqual([]);
  });

  it('writes frames a real client reads back (7-bit, 16-bit and 64-bit lengths)', () => {
    for (const size of [0, 125, 126, 65535, 65536]) {
      const data = Buffer.alloc(size, 7);
      const read = readAll(serverFrame('binary', data), []);
      expect(read.messages.map((m) => m.data.length)).toEqual([size]);
    }
    expect(MAX_MESSAGE).toBeGreaterThan(1024 * 1024);
  });
});
