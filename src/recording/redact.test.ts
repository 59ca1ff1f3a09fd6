import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectLinearIn } from '../../test/support/linear-time.js';
import { createRedactor, isPlaceholder } from './redact.js';

describe('createRedactor', () => {
  const r = createRedactor({ key: 'unit-key' });

  it('keeps the auth scheme and cookie names readable', () => {
    const h = r.headers({
      Authorization: 'Bearer abc.def',
      Cookie: 'theme=dark; sid=s3',
      'Content-Type': 'text/plain',
    });
    expect(h.Authorization).toBe(`Bearer ${r.placeholder('abc.def')}`);
    expect(h.Cookie).toBe(`theme=${r.placeholder('dark')}; sid=${r.placeholder('s3')}`);
    expect(h['Content-Type']).toBe('text/plain');
  });

  it('reads named pairs as a name and a value: the name stays, the value goes when the name names a secret', () => {
    const otlp = JSON.stringify({
      attributes: [
        { key: 'service.name', value: { stringValue: 'desk' } },
        { key: 'gen_ai.request.model', value: { stringValue: 'gpt-x' } },
        { key: 'http.request.header.authorization', value: { stringValue: 'Basic abc', more: ['def'] } },
        // A key that reads as no name (random) is still taken for a secret.
        { key: 'a8F3kD9xQ2mZ7', value: { intValue: 3 } },
      ],
    });
    const out = JSON.parse(r.text(otlp)) as { attributes: Array<{ key: string; value: Record<string, unknown> }> };
    expect(out.attributes.map((a) => a.key).slice(0, 3)).toEqual([
      'service.name',
      'gen_ai.request.model',
      'http.request.header.authorization',
    ]);
    expect(out.attributes[0]?.value).toEqual({ stringValue: 'desk' });
    expect(out.attributes[2]?.value).toEqual({ stringValue: r.placeholder('Basic abc'), more: [r.placeholder('def')] });
    expect(out.attributes[3]?.key).toBe(r.placeholder('a8F3kD9xQ2mZ7'));
    // The same as objects (tool arguments), any case; and twice is once.
    const env = {
      env: [
        { Name: 'DB_PASSWORD', Value: 'hunter2' },
        { name: 'MODE', value: 'fast' },
      ],
    };
    expect(r.json(env)).toEqual({
      env: [
        { Name: 'DB_PASSWORD', Value: r.placeholder('hunter2') },
        { name: 'MODE', value: 'fast' },
      ],
    });
    expect(r.text(r.text(JSON.stringify(env)))).toBe(r.text(JSON.stringify(env)));
    expect(r.json(r.json(env))).toEqual(r.json(env));
  });

  it('reads a body of many named pairs whose values never close in time linear in its length', () => {
    // 160 KiB against 1.25 MiB of the same unclosed pairs, by CPU time (test/support/linear-time.ts).
    expectLinearIn('unclosed named pairs', '{"key":"api_token","value":{"x":[', (body) => r.text(body), {
      kib: 160,
      floorMs: 0,
    });
  });

  it('tells secret names from look-alikes', () => {
    for (const name of [
      'api_key',
      'apiKey',
      'x-api-key',
      'access_token',
      'clientSecret',
      'PASSWORD',
      'key',
      'OPENAI_API_KEY',
    ]) {
      expect(r.isSecretName(name), name).toBe(true);
    }
    for (const name of [
      'max_tokens',
      'input_tokens',
      'keyword',
      'monkey',
      'tokenizer',
      'primaryKey',
      'cache_key',
      'public_key',
    ]) {
      expect(r.isSecretName(name), name).toBe(false);
    }
  });

  it('leaves numbers under secret-looking names (token counts) alone', () => {
    expect(r.json({ usage: { prompt_tokens: 5 }, token: 7 })).toEqual({ usage: { prompt_tokens: 5 }, token: 7 });
  });

  it("skips texts whose only hint is a token count ('max_tokens'), never a token beside one", () => {
    const counts = '{"max_tokens":5,"usage":{"prompt_tokens":3,"completion_tokens":2}}';
    expect(r.text(counts)).toBe(counts);
    for (const secret of [
      '{"max_tokens":5,"token":"abcd1234"}',
      'max_tokens=5&tokenSecret=abcd1234',
      '{"tokenS":"abcd1234"}',
      'x tokens=1 apiToken=abcd1234',
    ]) {
      expect(r.text(secret)).not.toContain('abcd1234');
    }
  });

  it("takes 'desk-1' or 'task-' for no hint of an sk- key, and still finds one", () => {
    const plain = '{"model":"desk-1","task":"task-9","text":"risk-free"}';
    expect(r.text(plain)).toBe(plain);
    const key = 'sk-live-abcdefghijklmnop1234';
    for (const text of [`{"model":"desk-1","k":"${key}"}`, `x=${key}`, `Bearer ${key}`])
      expect(r.text(text)).not.toContain(key);
  });

  it('is idempotent and keyed', () => {
    // A fake key, built at run time so no key-shaped string is committed.
    const text = `Bearer sk-${'abcdefghijklmnopqrstuvwx'} and {"token":"t0k"} and ?secret=s`;
    const once = r.text(text);
    expect(r.text(once)).toBe(once);
    expect(once).not.toMatch(/sk-abc|t0k|=s\b/);
    expect(isPlaceholder(r.placeholder('x'))).toBe(true);
    expect(createRedactor({ key: 'other-key' }).placeholder('x')).not.toBe(r.placeholder('x'));
    expect(createRedactor({ key: 'unit-key' }).placeholder('x')).toBe(r.placeholder('x'));
  });

  it('creates a private per-user key file when no key is given, and reuses it', () => {
    const home = mkdtempSync(join(tmpdir(), 'tapedeck-key-'));
    const saved = { xdg: process.env.XDG_CONFIG_HOME, env: process.env.TAPEDECK_REDACTION_KEY };
    try {
      process.env.XDG_CONFIG_HOME = home;
      delete process.env.TAPEDECK_REDACTION_KEY;
      const a = createRedactor();
      const file = join(home, 'tapedeck', 'redaction.key');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(createRedactor({ keyFile: file }).keyId).toBe(a.keyId);
      process.env.TAPEDECK_REDACTION_KEY = 'from-env';
      expect(createRedactor().keyId).toBe(createRedactor({ key: 'from-env' }).keyId);
    } finally {
      if (saved.xdg === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved.xdg;
      if (saved.env === undefined) delete process.env.TAPEDECK_REDACTION_KEY;
      else process.env.TAPEDECK_REDACTION_KEY = saved.env;
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('stream chunks', () => {
  const r = createRedactor({ key: 'unit-key' });
  const exchange = (chunks: Array<{ offsetMs: number; data: string }>) =>
    r.exchange({
      exchangeId: 'x',
      request: { method: 'POST', url: 'http://h/', headers: {} },
      response: { status: 200, headers: {}, chunks },
      startedAt: 't',
      durationMs: 1,
    }).response?.chunks ?? [];

  it('leaves chunk boundaries alone when no secret straddles them', () => {
    const chunks = [
      { offsetMs: 1, data: 'data: {"a":1}\n\nda' },
      { offsetMs: 2, data: 'ta: {"b":2}\n\n' },
    ];
    expect(exchange(chunks)).toEqual(chunks);
  });

  it('redacts a secret split across two chunks, and the chunks still join to the redacted stream', () => {
    const secret = 'sk-ant-api03-SPLITSECRET0123456789';
    const stream = `data: {"text":"hello"}\n\ndata: {"text":"key ${secret} end"}\n\n`;
    const split = stream.indexOf('SPLIT') + 3;
    const out = exchange([
      { offsetMs: 1, data: stream.slice(0, split) },
      { offsetMs: 7, data: stream.slice(split) },
    ]);
    const joined = out.map((c) => c.data).join('');
    expect(joined).toBe(r.text(stream));
    expect(joined).not.toContain('SPLIT');
    expect(out.map((c) => c.offsetMs)).toEqual([1, 7]);
    expect(out[0]?.data).toBe('data: {"text":"hello"}\n\n');
  });
});
