import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRedactor } from './redact.js';
import { Literals } from './redact-known.js';
import { escapeRegExp } from './redact-scan.js';
import type { HttpExchangePayload, WebSocketExchangePayload } from './types.js';

// Secrets of shapes no token pattern knows: only their names (in the env, a header, a field) tell.
const ENV = {
  ACME_API_KEY: 'acme_live_0f3c9a7d1e2b',
  ADMIN_PASSWORD: 'hunter2-correct-horse-battery',
  PGPASSWORD: 'pg-Pa55word-xyz',
  DATABASE_URL: 'postgres://app:db%40pass-9f2k@db.internal:5432/app',
  QUOTED_SECRET: 'say "open" sesame!',
  HOME_DIR: '/home/alice-long-name',
};
const KNOWN = [
  ['an api key of an unusual shape', 'acme_live_0f3c9a7d1e2b'],
  ['a passphrase', 'hunter2-correct-horse-battery'],
  ['PGPASSWORD', 'pg-Pa55word-xyz'],
  ['a URL password, as it is in the URL', 'db%40pass-9f2k'],
  ['a URL password, decoded', 'db@pass-9f2k'],
] as const;

describe('secrets known by value', () => {
  const r = createRedactor({ key: 'unit-key', env: ENV });
  const ph = (s: string) => r.placeholder(s);

  it.each(KNOWN)('replaces %s wherever it appears in text', (_what, secret) => {
    const texts = [
      `please use ${secret} to log in`,
      JSON.stringify({ messages: [{ role: 'user', content: `the key is ${secret}.` }] }),
      `${secret}`,
      `error: authentication failed for ${secret}\n`,
    ];
    for (const t of texts) {
      const out = r.text(t);
      expect(out).not.toContain(secret);
      expect(out).toContain('[REDACTED:hmac:');
    }
    const url = r.url(`https://api.example.com/v1/items/${encodeURIComponent(secret)}?q=${encodeURIComponent(secret)}`);
    expect(url).not.toContain(secret);
    expect(url).not.toContain(encodeURIComponent(secret));
    const argv = r.argv(['node', 'tool.mjs', secret, `--name=${secret}`]);
    expect(argv.join(' ')).not.toContain(secret);
    const json = r.json({ tool: 'search', args: { query: `find ${secret}`, list: [secret] } });
    expect(JSON.stringify(json)).not.toContain(secret);
    const headers = r.headers({ 'x-note': `signed ${secret}` });
    expect(headers['x-note']).not.toContain(secret);
  });

  it('replaces the JSON-escaped form of a secret with quotes in it, by the placeholder of the secret', () => {
    const body = JSON.stringify({ prompt: `remember: ${ENV.QUOTED_SECRET}` });
    const out = r.text(body);
    expect(out).not.toContain('open\\" sesame');
    expect(JSON.parse(out)).toEqual({ prompt: `remember: ${ph(ENV.QUOTED_SECRET)}` });
  });

  it('gives the same placeholder a value gets by name, so records and replays still match', () => {
    const byName = r.text(JSON.stringify({ api_key: ENV.ACME_API_KEY }));
    const byValue = r.text(`key ${ENV.ACME_API_KEY}`);
    expect(byName).toContain(ph(ENV.ACME_API_KEY));
    expect(byValue).toBe(`key ${ph(ENV.ACME_API_KEY)}`);
  });

  it('leaves values of variables whose names name no secret alone', () => {
    expect(r.text('cd /home/alice-long-name')).toBe('cd /home/alice-long-name');
  });

  it.each([
    ['a short value', 'abc1234'],
    ['a boolean', 'true'],
    ['a number', '1234567890'],
    ['a date', '2026-12-01'],
    ['masked', '********'],
    ['a placeholder', '[REDACTED:hmac:0123456789ab]'],
    ['one character repeated', 'xxxxxxxxxxxx'],
    ["a local database's default password", 'postgres'],
    ['a word of configuration', 'production'],
  ])('does not learn %s (ordinary text would be mangled)', (_what, value) => {
    const fresh = createRedactor({ key: 'unit-key', env: { SERVICE_TOKEN: value } });
    expect(fresh.learn(value)).toBe(false);
    fresh.headers({ authorization: `Bearer ${value}` });
    fresh.text(JSON.stringify({ password: value }));
    const text = `on ${value} at noon; count ${value}`;
    expect(fresh.text(text)).toBe(text);
  });

  it("does not take the shell's working directory or the path of a file (a *_CREDENTIALS, *_KEY_FILE) for a secret", () => {
    const fresh = createRedactor({
      key: 'unit-key',
      env: { PWD: process.cwd(), OLDPWD: '/nowhere/old-dir', GOOGLE_APPLICATION_CREDENTIALS: process.execPath },
    });
    const text = `cd ${process.cwd()} && ${process.execPath} agent.mjs # was /nowhere/old-dir`;
    expect(fresh.text(text)).toBe(text);
    expect(fresh.argv([process.execPath, `${process.cwd()}/agent.mjs`])).toEqual([
      process.execPath,
      `${process.cwd()}/agent.mjs`,
    ]);
  });

  it.each([
    [
      'an Authorization header',
      (x: ReturnType<typeof createRedactor>, s: string) => x.headers({ Authorization: `Basic ${s}` }),
    ],
    ['a custom secret header', (x: ReturnType<typeof createRedactor>, s: string) => x.headers({ 'X-Acme-Token': s })],
    ['a JSON field', (x: ReturnType<typeof createRedactor>, s: string) => x.text(JSON.stringify({ client_secret: s }))],
    ['a query parameter', (x: ReturnType<typeof createRedactor>, s: string) => x.url(`https://h/cb?access_token=${s}`)],
    ['a command-line flag', (x: ReturnType<typeof createRedactor>, s: string) => x.argv(['cli', '--password', s])],
    ['a URL password', (x: ReturnType<typeof createRedactor>, s: string) => x.url(`redis://u:${s}@cache:6379/0`)],
    [
      'a walked object field',
      (x: ReturnType<typeof createRedactor>, s: string) => x.json({ auth: { refreshToken: s } }),
    ],
  ])('learns a value redacted by name in %s, and replaces it elsewhere from then on', (_where, see) => {
    const fresh = createRedactor({ key: 'unit-key', env: false });
    const secret = 'Zq9-unusual-shape-77';
    expect(fresh.text(`quoted: ${secret}`)).toBe(`quoted: ${secret}`);
    see(fresh, secret);
    expect(fresh.text(`quoted: ${secret}`)).toBe(`quoted: ${fresh.placeholder(secret)}`);
  });

  it('finds a value an event names in the parts of that event redacted before it', () => {
    const fresh = createRedactor({ key: 'unit-key', env: false });
    const secret = 'tok-unusual-31337-abc';
    const exchange = fresh.payload('http.exchange', {
      exchangeId: 'x1',
      request: {
        method: 'POST',
        url: `https://api.example.com/echo/${secret}`,
        headers: { authorization: `Bearer-ish ${secret}` },
        body: { size: 10, text: `{"note":"${secret}"}` },
      },
      startedAt: '2026-12-01T00:00:00.000Z',
      durationMs: 1,
    } satisfies HttpExchangePayload);
    expect(JSON.stringify(exchange)).not.toContain(secret);
    const tool = fresh.payload('tool.called', {
      name: 't',
      args: { first: `x ${'q'.repeat(3)} 9-unusual-zz-secret`, password: '9-unusual-zz-secret' },
    });
    expect(JSON.stringify(tool)).not.toContain('9-unusual-zz-secret');
  });

  it('finds a known value in a WebSocket turn: its URL, the frames sent and received, a close reason', () => {
    const secret = ENV.ADMIN_PASSWORD;
    const turn = r.payload('websocket.exchange', {
      exchangeId: 'w1',
      connectionId: 'c1',
      turn: 1,
      url: `ws://127.0.0.1:1/live?session=${encodeURIComponent(secret)}`,
      kind: 'message',
      sent: { type: 'text', offsetMs: 0, body: { size: 40, text: JSON.stringify({ say: secret }) } },
      received: [
        { type: 'text', offsetMs: 1, body: { size: 40, text: `echo ${secret}` } },
        { type: 'close', offsetMs: 2, code: 1000, reason: `bye ${secret}` },
      ],
      startedAt: '2026-12-01T00:00:00.000Z',
      durationMs: 2,
    } satisfies WebSocketExchangePayload);
    expect(JSON.stringify(turn)).not.toContain(secret);
    expect(JSON.stringify(turn)).not.toContain(encodeURIComponent(secret));
    expect(JSON.stringify(turn)).toContain(ph(secret));
  });

  it('reads a placeholder the agent was served and put in a URL, percent-encoded, as the placeholder', () => {
    const p = ph(ENV.ACME_API_KEY);
    expect(r.url(`https://api.example.com/items/${encodeURIComponent(p)}`)).toBe(`https://api.example.com/items/${p}`);
    const lowerHex = encodeURIComponent(p).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    expect(r.text(`q=${lowerHex}`)).toBe(`q=${p}`);
  });

  it("redacts a step's name and route (they come from a URL), and keeps world state exact", () => {
    const secret = ENV.ACME_API_KEY;
    const step = r.payload('step.started', {
      stateType: 'API_CALL',
      name: `POST /items/${secret}`,
      route: `POST /items/${secret}`,
    });
    expect(JSON.stringify(step)).not.toContain(secret);
    // A secret the agent wrote into a file or a row is recorded as the world holds it (docs/recording-format.md).
    const world = [
      ['fs.changed', { path: `notes/${secret}.txt`, op: 'create', after: { sha256: 'a'.repeat(64), text: secret } }],
      [
        'db.changed',
        { schema: 'public', table: 't', op: 'insert', key: { id: secret }, after: { id: secret, name: secret } },
      ],
      ['nondeterminism', { kind: 'random', value: secret }],
    ] as const;
    for (const [type, payload] of world) expect(r.payload(type, payload)).toBe(payload);
  });

  it('redacts again a clean body when a secret was learned after it was made', () => {
    const fresh = createRedactor({ key: 'unit-key', env: false });
    const secret = 'later-learned-secret-1';
    const body = fresh.markClean({ size: 30, text: `the value ${secret}` });
    expect(fresh.body(body)).toBe(body);
    fresh.learn(secret);
    expect(fresh.body(body).text).toBe(`the value ${fresh.placeholder(secret)}`);
  });

  it("keeps a URL's scheme and host as they are, whatever values are known, so it still parses", () => {
    const fresh = createRedactor({ key: 'unit-key', env: false, secrets: ['acme-db-host-01', 'ghp-like-user-01'] });
    const url = fresh.url('postgres://ghp-like-user-01:pw-0123456789@acme-db-host-01:5432/acme-db-host-01');
    expect(url).toBe(
      `postgres://${fresh.placeholder('ghp-like-user-01')}:${fresh.placeholder('pw-0123456789')}@acme-db-host-01:5432/${fresh.placeholder('acme-db-host-01')}`,
    );
    expect(new URL(url).host).toBe('acme-db-host-01:5432');
    const pg = createRedactor({
      key: 'unit-key',
      env: { DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:5432/app' },
    });
    expect(pg.url('postgres://***@127.0.0.1:5432/postgres')).toBe('postgres://***@127.0.0.1:5432/postgres');
  });

  it('replaces the longest of overlapping secrets first', () => {
    const fresh = createRedactor({
      key: 'unit-key',
      env: false,
      secrets: ['abcdefgh', 'abcdefgh12345678', '12345678zz-tail'],
    });
    expect(fresh.text('x abcdefgh12345678 y')).toBe(`x ${fresh.placeholder('abcdefgh12345678')} y`);
    expect(fresh.text('x abcdefgh y')).toBe(`x ${fresh.placeholder('abcdefgh')} y`);
    // Overlapping, not nested: the leftmost wins, and neither is left whole.
    const out = fresh.text('abcdefgh12345678zz-tail');
    expect(out).not.toContain('abcdefgh12345678');
    expect(out).not.toContain('12345678zz-tail');
  });

  it('never edits a placeholder that happens to contain a known secret', () => {
    const other = createRedactor({ key: 'unit-key', env: false });
    const p = other.placeholder('anything');
    const hex = p.slice('[REDACTED:hmac:'.length, -1);
    const fresh = createRedactor({ key: 'unit-key', env: false, secrets: [hex, 'REDACTED:hmac'] });
    expect(fresh.text(`seen ${p} here`)).toBe(`seen ${p} here`);
    expect(fresh.text(`bare ${hex}`)).toBe(`bare ${fresh.placeholder(hex)}`);
  });

  it('keeps the environment secrets known however many values it learns', () => {
    const fresh = createRedactor({ key: 'unit-key', env: { API_TOKEN: 'env-token-abcdef-1' } });
    for (let i = 0; i < 1000; i++) fresh.learn(`learned-value-${i}`);
    expect(fresh.text('a env-token-abcdef-1 b')).toBe(`a ${fresh.placeholder('env-token-abcdef-1')} b`);
    expect(fresh.text('learned-value-999!')).toBe(`${fresh.placeholder('learned-value-999')}!`);
  });

  it('is idempotent: text(text(x)) === text(x), for many known values or few', () => {
    const secrets = ['hunter2-correct-horse', 'acme_live_0f3c9a7d', 'acme_live_0f3c9a7d1e2b', 'x"quoted"-secret'];
    const many = [...secrets, ...Array.from({ length: 40 }, (_, i) => `filler-secret-${i}-zz`)];
    const fragments = fc.constantFrom(
      ...secrets,
      'api_key=',
      '{"password": "pw-value-1234"} ',
      '"',
      ' ',
      'Bearer ',
      '[REDACTED:hmac:0123456789ab]',
      'hunter2',
      'acme_live_',
      '%40',
      '\\"',
      '\n\n',
      // A fragment of an sk- key's shape, made here so that no key-shaped literal sits in the tree.
      ['sk', 'abcdefghijklmnopqrstu'].join('-'),
    );
    for (const list of [secrets, many]) {
      const fresh = createRedactor({ key: 'unit-key', env: false, secrets: list });
      fc.assert(
        fc.property(fc.array(fragments, { maxLength: 12 }), (parts) => {
          const once = fresh.text(parts.join(''));
          expect(fresh.text(once)).toBe(once);
          for (const s of secrets) if (s.length >= 8) expect(once).not.toContain(s);
        }),
        { numRuns: 300 },
      );
    }
  });
});

describe('the known values pass as a server uses it (a value learned every session)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('finds what one alternation of every value, longest first, finds, whatever was added and deleted', () => {
    // Overlapping and nested literals: longest-first and leftmost-first both matter.
    const literal = fc.constantFrom(
      'abcdefgh',
      'abcdefgh12345678',
      '12345678zz-tail',
      'cdefgh12',
      'zz-tail-zz-tail',
      'hhhhhhhh',
      'hhhhhhhhhh',
      'x.y*z+q?',
    );
    const op = fc.oneof(
      fc.record({ add: literal }),
      fc.record({ delete: literal }),
      fc.record({ text: fc.array(fc.oneof(literal, fc.constantFrom(' ', 'a', 'h', '12', 'zz')), { maxLength: 10 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const set = new Literals();
        const members = new Set<string>();
        for (const o of ops) {
          if ('add' in o) {
            set.add(o.add);
            members.add(o.add);
          } else if ('delete' in o) {
            set.delete(o.delete);
            members.delete(o.delete);
          } else {
            const text = o.text.join('');
            const sorted = [...members].sort((a, b) => b.length - a.length);
            const expected =
              sorted.length === 0
                ? text
                : text.replace(new RegExp(sorted.map(escapeRegExp).join('|'), 'g'), (m) => `<${m}>`);
            expect(set.replace(text, (m) => `<${m}>`)).toBe(expected);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('does not compile every known value again for each value it learns', () => {
    const r = createRedactor({ key: 'unit-key', env: false });
    const value = (i: number) => `learned-${String(i).padStart(6, '0')}-${'q'.repeat(24)}`;
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'reserve two of SKU-0001234 '.repeat(20) }] });
    // The set full: 64 learned values, the most it keeps.
    for (let i = 0; i < 64; i++) r.learn(value(i));
    r.text(body);
    let compiled = 0;
    const Native = RegExp;
    // A constructor's stand-in (new RegExp(…)): a function, not an arrow.
    function counted(source: string | RegExp, flags?: string): RegExp {
      compiled += typeof source === 'string' ? source.length : source.source.length;
      return new Native(source, flags);
    }
    vi.spyOn(globalThis, 'RegExp').mockImplementation(counted as unknown as () => RegExp);
    const learned = 90;
    for (let i = 64; i < 64 + learned; i++) {
      r.learn(value(i));
      expect(r.text(`${body} ${value(i)}`)).not.toContain(value(i));
    }
    vi.restoreAllMocks();
    // Once a value: 64 values' source (~40 characters each) a value learned.
    const setSource = 64 * (value(0).length + 1);
    expect(compiled / learned).toBeLessThan(setSource / 3);
  });
});
