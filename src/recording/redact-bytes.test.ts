// The redactor's bytes pass: secrets in bytes (known values as UTF-8, token patterns as ASCII)
// masked in place at their length, deterministic, idempotent, across a binary stream's chunks,
// and cheap on a megabyte with nothing to find.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedactor, masksForMatching } from './redact.js';
import type { HttpExchangePayload } from './types.js';

const ENV_KEY = 'acme_live_0123456789abcdef';
const TOKEN = ['sk', 'proj', `${'Q'.repeat(6)}abcdefghijklmnopqrstuvwx`].join('-');
const SHORT = 'pässwörd-9';
const r = createRedactor({ key: 'unit-key', env: { ACME_API_KEY: ENV_KEY }, secrets: [SHORT] });
const frame = (parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

describe('redactor.bytes', () => {
  it('masks known values and token patterns in place, each as many bytes as the secret, equal secrets alike', () => {
    const input = frame([[0xff, 0x00], ENV_KEY, [0x80], TOKEN, [0xfe], SHORT, [0x01], ENV_KEY, [0xc3]]);
    const out = r.bytes(input);
    expect(out.length).toBe(input.length);
    for (const secret of [ENV_KEY, TOKEN, SHORT]) expect(out.includes(secret)).toBe(false);
    // The bytes around the secrets stay as they were.
    expect([out[0], out[1], out[out.length - 1]]).toEqual([0xff, 0x00, 0xc3]);
    const view = out.toString('latin1');
    // A secret shorter than a placeholder: `[R:` and the hex its placeholder starts with.
    const keyMask = view.slice(2, 2 + ENV_KEY.length);
    expect(keyMask).toMatch(/^\[R:[0-9a-f]{22}\]$/);
    expect(keyMask.slice(3, 15)).toBe(r.placeholder(ENV_KEY).slice(15, 27));
    expect(view.lastIndexOf(keyMask)).toBeGreaterThan(2);
    // A token longer than a placeholder: the placeholder text redaction gives it, padded.
    expect(view).toContain(`${r.placeholder(TOKEN)}${'*'.repeat(TOKEN.length - 28)}`);
    // Masks and placeholders of one secret read alike for matching.
    expect(masksForMatching(keyMask)).toBe(masksForMatching(r.placeholder(ENV_KEY)));
    expect(masksForMatching(keyMask)).not.toBe(masksForMatching(r.placeholder(TOKEN)));
  });

  it('gives back the very bytes when nothing is found, and changes nothing a second time', () => {
    const clean = randomBytes(4096);
    expect(r.bytes(clean)).toBe(clean);
    const once = r.bytes(frame([ENV_KEY, [0xff], TOKEN]));
    expect(r.bytes(once).equals(once)).toBe(true);
  });

  it('masks a secret split across two chunks of a gRPC stream, each chunk keeping its length', () => {
    const message = frame([[0, 0, 0, 0, 40, 0x0a, 38], ENV_KEY, [0xff, 0xfe]]);
    const cut = 12;
    const chunks = [message.subarray(0, cut), message.subarray(cut)].map((b, i) => ({
      offsetMs: i,
      data: b.toString('base64'),
      encoding: 'base64' as const,
    }));
    const payload = {
      exchangeId: 'x',
      request: { method: 'POST', url: 'http://h/orders.Orders/Get', headers: {} },
      response: { status: 200, headers: { 'content-type': 'application/grpc' }, chunks },
      startedAt: new Date(0).toISOString(),
      durationMs: 1,
    } as HttpExchangePayload;
    const out = r.exchange(payload).response?.chunks ?? [];
    const bytes = out.map((c) => Buffer.from(c.data, c.encoding === 'base64' ? 'base64' : 'utf8'));
    expect(bytes.map((b) => b.length)).toEqual([cut, message.length - cut]);
    expect(Buffer.concat(bytes).includes(ENV_KEY)).toBe(false);
    expect(Buffer.concat(bytes).equals(r.bytes(message))).toBe(true);
  });

  it('reads a megabyte with nothing to find in a few milliseconds', () => {
    const body = randomBytes(1 << 20);
    r.bytes(body);
    const runs = 20;
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) r.bytes(body);
    const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
    console.log(`redactor.bytes: ${ms.toFixed(2)} ms per clean 1 MiB`);
    // Generous: a shared machine; the measured figure is in the log.
    expect(ms).toBeLessThan(100);
  });
});
