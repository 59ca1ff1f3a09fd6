// A replay writes each call served from the recording with the recorded response's body as the
// replay's writer stores those bytes (inline text, a binary type's base64, a blob its folder holds),
// and the agent's own request as it sends it again, its secrets redacted: none reaches the
// replay's folder. Through node:http (answered by the preload's fast index, then reported) and
// fetch (asked of the replayer).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyBytes, type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'served-bodies-agent.mjs');
const BIG = JSON.stringify({ rows: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}` })) });

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? allFiles(file) : [file];
  });
}

describe('calls served from the recording, as a replay writes them', () => {
  const tmp = tempDir('tapedeck-served-bodies-');
  let api: TestServer;

  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      const answers: Record<string, [string, Buffer]> = {
        '/login': ['application/json', Buffer.from(JSON.stringify({ ok: true, session_token: 'tok-from-server' }))],
        '/text': ['text/plain; charset=utf-8', Buffer.from('héllo ✓ wörld', 'utf8')],
        '/png': ['image/png', Buffer.from('not really a png, but UTF-8', 'utf8')],
        '/big': ['application/json', Buffer.from(BIG)],
        '/empty': ['text/plain', Buffer.alloc(0)],
      };
      const [type, bytes] = answers[req.url ?? ''] ?? ['text/plain', Buffer.from('?')];
      res.setHeader('content-type', type);
      res.end(bytes);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  /**
   * Records the agent, then gives its recording's text answer the body `body` (events.jsonl's
   * JSON for it), with `header` a header holding `canary`, and its manifest `rules` (the integrity
   * hash made to match), as a recorder other than this one could have written it; replays it and
   * returns that answer as the replay stored it, having checked `canary` is on no file of the replay.
   */
  async function replayAltered(
    name: string,
    canary: string,
    { body, header, rules }: { body: string; header: boolean; rules: (r: string[]) => string[] },
  ) {
    const env = { API_URL: api.url, CLIENT: 'http', CANARY: 'c4n4ry' };
    const out = path.join(tmp.dir, `rec-${name}`);
    expect((await recordAgent(AGENT, out, env)).exitCode).toBe(0);
    const events = readFileSync(path.join(out, 'events.jsonl'), 'utf8')
      .replace('"body":{"contentType":"text/plain; charset=utf-8","size":17,"text":"héllo ✓ wörld"}', body)
      .replace(
        '"content-type":"text/plain; charset=utf-8"',
        `"content-type":"text/plain; charset=utf-8"${header ? `,"x-echo":"${canary}"` : ''}`,
      );
    expect(events).toContain(body);
    writeFileSync(path.join(out, 'events.jsonl'), events);
    const manifestFile = path.join(out, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    manifest.redaction.rules = rules(manifest.redaction.rules);
    manifest.integrity.eventsSha256 = createHash('sha256').update(events).digest('hex');
    writeFileSync(manifestFile, JSON.stringify(manifest));

    const result = await replayExact(out, path.join(tmp.dir, `replay-${name}`), 'none', env);
    expect(result.divergences, result.output?.stderr).toEqual([]);
    for (const file of allFiles(result.dir)) expect(readFileSync(file).includes(canary), file).toBe(false);
    const { events: replayed } = await readRecording(result.dir);
    return replayed.flatMap((e) => (e.type === 'http.exchange' ? [e.payload as HttpExchangePayload] : []))[1];
  }

  it('redacts again what it copies from a recording redacted under other rules', { timeout: 300_000 }, async () => {
    // As if made by a recorder with one rule fewer that let a key through in the answer's body and headers.
    const canary = `sk-proj-${randomBytes(16).toString('hex')}`;
    const text = `héllo ✓ wörld ${canary}`;
    const body = `"body":{"contentType":"text/plain; charset=utf-8","size":${Buffer.byteLength(text)},"text":"${text}"}`;
    const served = await replayAltered('other-rules', canary, { body, header: true, rules: (r) => r.slice(1) });
    expect(served?.response?.body?.text).toMatch(/^héllo ✓ wörld \[REDACTED:hmac:[0-9a-f]{12}\]$/);
    expect(served?.response?.headers['x-echo']).toMatch(/^\[REDACTED:hmac:[0-9a-f]{12}\]$/);
  });

  it('redacts again what it copies from a recording made under the same rules (an older, weaker pattern)', {
    timeout: 300_000,
  }, async () => {
    // A rule keeps its name when its pattern grows stronger: the copy is redacted by today's redactor.
    const canary = `sk-proj-${randomBytes(16).toString('hex')}`;
    const text = `héllo ✓ wörld ${canary}`;
    const body = `"body":{"contentType":"text/plain; charset=utf-8","size":${Buffer.byteLength(text)},"text":"${text}"}`;
    const served = await replayAltered('same-rules', canary, { body, header: true, rules: (r) => r });
    expect(served?.response?.body?.text).toMatch(/^héllo ✓ wörld \[REDACTED:hmac:[0-9a-f]{12}\]$/);
    expect(served?.response?.headers['x-echo']).toMatch(/^\[REDACTED:hmac:[0-9a-f]{12}\]$/);
  });

  it('redacts a recorded base64 body it stores as text, whatever the rules', { timeout: 300_000 }, async () => {
    // A recorder keeps bytes it does not take for text as base64, unredacted.
    const canary = `sk-proj-${randomBytes(16).toString('hex')}`;
    const bytes = Buffer.from(`héllo ✓ wörld ${canary}`);
    const body = `"body":{"base64":"${bytes.toString('base64')}","contentType":"text/plain; charset=utf-8","size":${bytes.length}}`;
    const served = await replayAltered('base64', canary, { body, header: false, rules: (r) => r });
    expect(served?.response?.body?.text).toMatch(/^héllo ✓ wörld \[REDACTED:hmac:[0-9a-f]{12}\]$/);
  });

  for (const client of ['http', 'fetch']) {
    it(`${client}: stores the recorded bodies as recorded and the agent's secrets redacted`, {
      timeout: 300_000,
    }, async () => {
      const canary = `c4n4ry${randomBytes(12).toString('hex')}`;
      const env = { API_URL: api.url, CLIENT: client, CANARY: canary };
      const out = path.join(tmp.dir, `rec-${client}`);
      const { exitCode, stdout } = await recordAgent(AGENT, out, env);
      expect(exitCode).toBe(0);
      const result = await replayExact(out, path.join(tmp.dir, `replay-${client}`), 'none', env);
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.served.recording).toBe(5);
      // The agent got what it got when recorded, the server's secret field as its placeholder.
      const seen = JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as Array<{ status: number; body: string }>;
      const got = JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '[]') as typeof seen;
      const text = (b: string) => Buffer.from(b, 'base64').toString('utf8');
      expect(text(got[0]?.body ?? '')).toMatch(/^\{"ok":true,"session_token":"\[REDACTED:hmac:[0-9a-f]{12}\]"\}$/);
      expect(got.slice(1)).toEqual(seen.slice(1));

      const exchanges = (dir: string) =>
        readRecording(dir).then((r) => ({
          r,
          xs: r.events.filter((e) => e.type === 'http.exchange').map((e) => e.payload as HttpExchangePayload),
        }));
      const before = await exchanges(out);
      const after = await exchanges(result.dir);
      expect(after.xs.map((x) => x.servedFrom)).toEqual(Array(5).fill('recording'));
      // Each response's recorded bytes, stored as the replay's writer stores bytes: inline text, a
      // binary type's as base64 (the recorder kept these as text), past the inline limit a blob
      // the replay's folder holds, an empty one as none.
      const bytes = (r: typeof after.r, x: HttpExchangePayload) => bodyBytes(r, x.response?.body);
      expect(after.xs.map((x) => bytes(after.r, x))).toEqual(before.xs.map((x) => bytes(before.r, x)));
      const kinds = after.xs.map((x) =>
        Object.keys(x.response?.body ?? {}).find((k) => k !== 'size' && k !== 'contentType'),
      );
      expect(kinds).toEqual(['text', 'text', 'base64', 'blob', undefined]);
      for (const i of [0, 1, 3, 4]) expect(after.xs[i]?.response?.body).toEqual(before.xs[i]?.response?.body);
      expect(after.xs[2]?.response?.body).toEqual({ size: 27, contentType: 'image/png', base64: expect.any(String) });
      expect(bytes(after.r, after.xs[3] as HttpExchangePayload)?.toString('utf8')).toBe(BIG);

      // The agent's request, sent again: its secrets as placeholders, as the recording has them.
      const login = after.xs[0]?.request;
      expect(login?.headers.authorization).toMatch(/^Bearer \[REDACTED:hmac:[0-9a-f]{12}\]$/);
      expect(login?.body?.text).toMatch(/^\{"api_key":"\[REDACTED:hmac:[0-9a-f]{12}\]","q":"orders"\}$/);
      expect(login?.body).toEqual(before.xs[0]?.request.body);
      expect(login?.headers.authorization).toBe(before.xs[0]?.request.headers.authorization);
      for (const file of allFiles(result.dir)) expect(readFileSync(file).includes(canary), file).toBe(false);
    });
  }
});
