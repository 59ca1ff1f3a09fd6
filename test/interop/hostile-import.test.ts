// `tapedeck import` takes another tool's file, which is untrusted input: a HAR archive or OTLP
// traces made from a committed recording (export), then damaged field by field — times that are
// not times or lie past what a date holds, durations and token counts that are huge, negative or
// fractional, methods, URLs and headers HTTP does not allow, a host that is not one, JSON nested
// thousands deep in a request or a message — and, seeded (fast-check), any field of an entry set to
// a hostile value. Every import ends one of two ways: exit 0 with a recording every command reads,
// or exit 2 with one `tapedeck:` line and nothing left where the recording was asked for (no half
// recording, no temp folder). Never a stack trace.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { recordingToHar, recordingToOtlp } from '../../src/interop/index.js';
import { readRecording } from '../../src/recording/index.js';
import { root } from '../cli/run-cli.js';
import { runInProcess } from '../support/in-process-cli.js';

type Json = Record<string, unknown>;
const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-untrusted-import-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const example = path.join(root, 'recordings/examples/openai-baseline');
const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const copy = <T>(value: T): T => structuredClone(value);
let n = 0;

/** Imports `file` as the CLI does and checks the outcome is one of the two allowed. */
async function importChecked(kind: '--har' | '--otlp', value: unknown, what: string): Promise<'ok' | 'refused'> {
  const dir = path.join(tmp, `case-${++n}`);
  const file = path.join(tmp, `case-${n}.json`);
  writeFileSync(file, JSON.stringify(value));
  const out = path.join(dir, 'rec');
  const run = await runInProcess(['import', kind, file, '--out', out], 60_000);
  const context = `${what}: ${run.crash ?? run.stderr}`;
  expect(run.crash, context).toBeUndefined();
  expect(run.stderr, context).not.toMatch(/\n\s+at |TypeError|RangeError/);
  if (run.code === 0) {
    await expect(readRecording(out), context).resolves.toBeDefined();
    return 'ok';
  }
  expect(run.code, context).toBe(2);
  expect(run.stderr, context).toMatch(/^tapedeck: [^\n]+\n$/);
  expect(existsSync(out), `${context}: a recording was left behind`).toBe(false);
  expect(existsSync(dir) ? readdirSync(dir) : [], `${context}: a temp folder was left behind`).toEqual([]);
  return 'refused';
}

describe('import of a hostile HAR archive', async () => {
  const har = recordingToHar(await readRecording(example)) as unknown as { log: { entries: Json[] } };
  const entry = (h: typeof har, i = 0) =>
    h.log.entries[i] as Json & { request: Json; response: Json & { content: Json } };
  const damage: Array<[string, (h: typeof har) => void]> = [
    ['a start that is not a time', (h) => (entry(h).startedDateTime = 'yesterday')],
    [
      'a start in the year 9999 and a long time',
      (h) => Object.assign(entry(h, 1), { startedDateTime: '9999-12-31T23:59:59.000Z', time: 9e10 }),
    ],
    ['a duration past any date', (h) => (entry(h).time = 1e308)],
    ['a negative duration', (h) => (entry(h).time = -5)],
    ['a wait past any date', (h) => (entry(h).timings = { wait: 1e300 })],
    ['a wait of -1 (not applicable)', (h) => (entry(h).timings = { wait: -1 })],
    ['a time to first byte past any date', (h) => ((entry(h)._tapedeck as Json).ttfbMs = 1e300)],
    ['a method with a line break', (h) => (entry(h).request.method = 'GET\r\nX-Evil: 1')],
    ['a URL that does not parse', (h) => (entry(h).request.url = 'not a url')],
    ['a header name with a space', (h) => (entry(h).request.headers as Json[]).push({ name: 'x evil', value: '1' })],
    [
      'a header value with a carriage return',
      (h) => (entry(h).response.headers as Json[]).push({ name: 'x', value: 'a\rb' }),
    ],
    ['a header value with NUL', (h) => (entry(h).request.headers as Json[]).push({ name: 'x', value: 'a\u0000' })],
    ['a status past 999', (h) => (entry(h).response.status = 1e9)],
    ['an empty exchange id', (h) => ((entry(h)._tapedeck as Json).exchangeId = '')],
    [
      'a request body nested 250 deep',
      (h) => {
        const post = entry(h).request.postData as Json;
        post.text = String(post.text).replace('"messages":[', `"messages":[{"role":"user","content":${nest(250)}},`);
      },
    ],
    [
      'a request body nested 20000 deep',
      (h) => {
        const post = entry(h).request.postData as Json;
        post.text = String(post.text).replace('"messages":[', `"messages":[{"role":"user","content":${nest(20_000)}},`);
      },
    ],
    [
      'token counts past 2^53, negative and fractional',
      (h) => {
        const content = entry(h).response.content;
        const body = JSON.parse(String(content.text)) as Json;
        body.usage = {
          prompt_tokens: 1e30,
          completion_tokens: -3,
          completion_tokens_details: { reasoning_tokens: 1.5 },
        };
        content.text = JSON.stringify(body);
      },
    ],
  ];
  for (const [what, change] of damage) {
    it(`${what}: read back whole, or refused in one line leaving nothing`, async () => {
      const h = copy(har);
      change(h);
      await importChecked('--har', h, what);
    });
  }

  it('a refused import into a folder the user made leaves that folder as it was', async () => {
    const h = copy(har);
    // Passes the archive's checks, and makes times past the year 9999: refused when read back.
    Object.assign(entry(h, 1), { startedDateTime: '9999-12-31T23:59:59.000Z', time: 9e10 });
    const file = path.join(tmp, 'late.json');
    writeFileSync(file, JSON.stringify(h));
    const out = path.join(tmp, 'users-folder');
    mkdirSync(path.join(out, 'notes'), { recursive: true });
    writeFileSync(path.join(out, 'notes', 'keep.txt'), 'mine');
    const run = await runInProcess(['import', '--har', file, '--out', out], 60_000);
    expect(run.crash).toBeUndefined();
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^tapedeck: the imported recording does not read back \([^\n]+\n$/);
    expect(readdirSync(out)).toEqual(['notes']);
    expect(readFileSync(path.join(out, 'notes', 'keep.txt'), 'utf8')).toBe('mine');
  });

  it('any field of an entry set to a hostile value (seeded)', async () => {
    const hostile = fc.constantFrom<unknown>(
      -1,
      1e308,
      -1e308,
      1.5,
      2 ** 53 + 2,
      'NaN',
      'Infinity',
      '',
      '\u001b[2J\u001b]0;x\u0007',
      '../../etc/passwd',
      '\r\n',
      '\u0000',
      null,
      true,
      [],
      {},
      '9999-12-31T23:59:59.999Z',
      '0000-01-01T00:00:00Z',
    );
    const field = fc.constantFrom(
      ['startedDateTime'],
      ['time'],
      ['request', 'method'],
      ['request', 'url'],
      ['request', 'headers', '0', 'name'],
      ['request', 'headers', '0', 'value'],
      ['request', 'postData', 'text'],
      ['response', 'status'],
      ['response', 'content', 'text'],
      ['response', 'content', 'encoding'],
      ['response', 'content', 'size'],
      ['timings', 'wait'],
      ['_tapedeck', 'exchangeId'],
      ['_tapedeck', 'ttfbMs'],
      ['_tapedeck', 'requestBase64'],
    );
    const outcomes = { ok: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.nat(har.log.entries.length - 1), field, hostile, async (i, at, value) => {
        const h = copy(har);
        let holder = h.log.entries[i] as Json;
        for (const key of at.slice(0, -1)) holder = (holder[key] ??= {}) as Json;
        holder[at.at(-1) as string] = value;
        outcomes[await importChecked('--har', h, `entry ${i} ${at.join('.')} = ${JSON.stringify(value)}`)]++;
      }),
      { seed: Number(process.env.TAPEDECK_FUZZ_SEED ?? 29), numRuns: 30 },
    );
    expect(outcomes.ok + outcomes.refused).toBe(30);
  }, 120_000);
});

describe('import of hostile OTLP traces', async () => {
  const traces = recordingToOtlp(await readRecording(example)) as unknown as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: Json[] }> }>;
  };
  const spansOf = (t: typeof traces) => t.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  const setAttr = (span: Json, key: string, value: Json) => {
    const attrs = (span.attributes ??= []) as Array<{ key: string; value: Json }>;
    const found = attrs.find((a) => a.key === key);
    if (found) found.value = value;
    else attrs.push({ key, value });
  };
  const everySpan = (key: string, value: Json) => (t: typeof traces) => {
    for (const span of spansOf(t)) setAttr(span, key, value);
  };
  const damage: Array<[string, (t: typeof traces) => void]> = [
    ['a start before 1970', (t) => ((spansOf(t)[1] as Json).startTimeUnixNano = '-99999999999999999999')],
    ['an end in the year 5000', (t) => ((spansOf(t)[1] as Json).endTimeUnixNano = '99999999999999999999')],
    ['a server address that is not a host', everySpan('server.address', { stringValue: 'evil host/../x' })],
    ['a server address with a user and a path', everySpan('server.address', { stringValue: 'u:p@h.test/x?y' })],
    ['a port out of range', everySpan('server.port', { intValue: 999999 })],
    ['input tokens past 2^53', everySpan('gen_ai.usage.input_tokens', { intValue: '99999999999999999999' })],
    ['negative output tokens', everySpan('gen_ai.usage.output_tokens', { intValue: '-5' })],
    ['fractional cache tokens', everySpan('gen_ai.usage.cache_read.input_tokens', { doubleValue: 2.5 })],
    ['tokens as NaN', everySpan('gen_ai.usage.input_tokens', { doubleValue: 'NaN' })],
    [
      'messages nested 250 deep',
      everySpan('gen_ai.input.messages', {
        stringValue: `[{"role":"user","parts":[{"type":"text","content":"x"}],"extra":${nest(250)}}]`,
      }),
    ],
    [
      'messages nested 20000 deep',
      everySpan('gen_ai.output.messages', {
        stringValue: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"t","arguments":${nest(20_000)}}]}]`,
      }),
    ],
  ];
  for (const [what, change] of damage) {
    it(`${what}: read back whole, or refused in one line leaving nothing`, async () => {
      const t = copy(traces);
      change(t);
      await importChecked('--otlp', t, what);
    });
  }
});
