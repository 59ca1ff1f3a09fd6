// Canary secrets in every place a secret can travel are absent from every byte on disk,
// and equal secrets map to equal placeholders.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bodyText, createRecordingWriter, createRedactor, readRecording } from '../../src/recording/index.js';
import { init, TEST_KEY, tempDir } from './helpers.js';

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

describe('redaction at write time', () => {
  it('keeps canary secrets off disk in headers, URLs, bodies, blobs, stream chunks and model/tool payloads', async () => {
    const hex = randomBytes(12).toString('hex');
    // A secret with no recognisable shape: only names (header, field, parameter) can find it.
    const plain = `c4n4ry${hex}`;
    // Secrets with token shapes: patterns find them anywhere in text.
    const sk = `sk-ant-api03-CANARY${hex}`;
    const ghp = `ghp_CANARY${hex}`;
    const akia = `AKIA${'CANARY0123456789'}`; // built at run time: no key-shaped string committed
    const canaries = [plain, sk, ghp, akia];

    const dir = join(tempDir(), 'canary');
    const w = await createRecordingWriter(dir, init('canary'));
    const time = '2026-11-24T12:00:00.000Z';
    w.append({
      type: 'run.started',
      stepId: 0,
      time,
      payload: { command: ['node', 'agent.mjs', `--api-key=${sk}`], cwd: '/w' },
    });
    w.append({ type: 'step.started', stepId: 1, time, payload: { stateType: 'THINK', name: 'model' } });
    const jsonBody = JSON.stringify({
      key: plain,
      token: plain,
      secret: plain,
      api_key: plain,
      client_secret: plain,
      password: plain,
      nested: { access_token: plain, apiKey: plain },
      messages: [{ role: 'user', content: `my key is ${sk} and ${ghp}, aws ${akia}` }],
      // Named pairs: the name names the secret, the value holds it (Kubernetes env, AWS tags,
      // OpenTelemetry attributes).
      env: [{ name: 'DB_PASSWORD', value: plain }],
      Tags: [{ Key: 'ApiKey', Value: plain }],
      attributes: [{ key: 'http.request.header.x-api-key', value: { stringValue: plain } }],
    });
    const bigBody = JSON.stringify({ token: plain, padding: 'p'.repeat(8000), text: `Authorization: Bearer ${plain}` });
    w.append({
      type: 'http.exchange',
      stepId: 1,
      time,
      payload: {
        exchangeId: 'x1',
        request: {
          method: 'POST',
          url: `https://api.example.test/v1/messages?key=${plain}&token=${plain}&secret=${plain}&api_key=${plain}&q=1`,
          headers: {
            Authorization: `Bearer ${plain}`,
            'Proxy-Authorization': `Basic ${plain}`,
            Cookie: `theme=dark; session=${plain}`,
            'x-api-key': plain,
            'API-Key': plain,
            'X-Custom-Auth-Token': plain,
            'content-type': 'application/json',
          },
          body: w.body(jsonBody, 'application/json'),
        },
        response: {
          status: 200,
          headers: { 'Set-Cookie': `sid=${plain}; Path=/; HttpOnly`, 'content-type': 'text/event-stream' },
          body: w.body(bigBody, 'application/json'),
          chunks: [
            { offsetMs: 1, data: `data: {"type":"text","text":"the key is ${sk}"}\n\n` },
            { offsetMs: 2, data: `data: {"type":"text","token":"${plain}"}\n\n` },
          ],
        },
        startedAt: time,
        durationMs: 5,
      },
    });
    w.append({
      type: 'http.exchange',
      stepId: 1,
      time,
      payload: {
        exchangeId: 'x2',
        request: {
          method: 'POST',
          url: 'https://auth.example.test/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: w.body(
            Buffer.from(`grant_type=client_credentials&client_secret=${plain}&client_id=me`),
            'application/x-www-form-urlencoded',
          ),
        },
        response: {
          status: 200,
          headers: {},
          body: w.body(`{"access_token":"${plain}","token_type":"bearer","expires_in":3600}`),
        },
        startedAt: time,
        durationMs: 5,
      },
    });
    w.append({
      type: 'model.called',
      stepId: 1,
      time,
      payload: {
        exchangeId: 'x1',
        provider: 'anthropic',
        api: 'messages',
        model: 'claude',
        streamed: true,
        system: `Use the token ${sk} for the API.`,
        messages: [
          { role: 'user', content: [{ type: 'text', text: `here: ${ghp}` }] },
          { role: 'user', content: `{"password":"${plain}"}` },
        ],
        output: {
          text: `Calling with Bearer ${plain}`,
          toolCalls: [{ id: 't1', name: 'call_api', arguments: JSON.stringify({ api_key: plain, q: 'flights' }) }],
        },
        usage: { inputUncached: 10, cacheRead: 5, cacheWrite: 0, output: 7, reasoning: 0 },
        latencyMs: 5,
      },
    });
    w.append({ type: 'step.completed', stepId: 1, time, payload: { status: 'success', latencyMs: 5 } });
    w.append({
      type: 'step.started',
      stepId: 2,
      parentStepId: 1,
      time,
      payload: { stateType: 'API_CALL', name: 'call_api' },
    });
    w.append({
      type: 'tool.called',
      stepId: 2,
      parentStepId: 1,
      time,
      payload: {
        kind: 'http',
        name: 'call_api',
        stateType: 'API_CALL',
        args: {
          apiKey: plain,
          url: `https://x.test/?access_token=${plain}`,
          env: [{ name: 'SECRET_TOKEN', value: plain }],
        },
        result: { token: plain, note: `rotated ${akia}` },
        resultBody: w.body(`secret=${plain}`),
        error: { code: 'E', message: `failed with key ${sk}` },
        mutating: false,
        latencyMs: 2,
      },
    });
    w.append({
      type: 'step.completed',
      stepId: 2,
      parentStepId: 1,
      time,
      payload: { status: 'success', latencyMs: 2 },
    });
    w.append({
      type: 'run.completed',
      stepId: 0,
      time,
      payload: { status: 'complete', exitCode: 0, finalOutput: `done with ${sk}` },
    });
    await w.close('complete');

    const files = allFiles(dir);
    expect(files.some((f) => f.includes('blobs/sha256/'))).toBe(true);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const canary of canaries) {
        expect(bytes.includes(canary), `${canary} found in ${file}`).toBe(false);
        expect(bytes.includes(Buffer.from(canary).toString('base64')), `base64 ${canary} in ${file}`).toBe(false);
      }
    }

    const redactor = createRedactor({ key: TEST_KEY });
    const events = readFileSync(join(dir, 'events.jsonl'), 'utf8');
    // Every occurrence of the plain canary became the same placeholder, wherever it was.
    // 4 in the URL, 6 headers, 8 JSON fields, 3 named pairs' values, Set-Cookie, an SSE chunk, the
    // form body, the token response, 3 in model.called, 5 in tool.called.
    expect(count(events, redactor.placeholder(plain))).toBe(33);
    // A named pair's name is a name: it stays readable.
    for (const name of ['DB_PASSWORD', 'ApiKey', 'http.request.header.x-api-key', 'SECRET_TOKEN'])
      expect(events, name).toContain(name);
    expect(count(events, redactor.placeholder(sk))).toBeGreaterThanOrEqual(6);
    expect(events).toContain('Bearer [REDACTED:hmac:');
    expect(events).toContain('theme=[REDACTED:hmac:'); // cookie names stay readable
    // Values that are not secrets stay as they were: usage, token_type counts, the model name.
    const rec = await readRecording(dir);
    const model = rec.events.find((e) => e.type === 'model.called');
    if (model?.type !== 'model.called') throw new Error('no model.called');
    expect(model.payload.usage).toEqual({ inputUncached: 10, cacheRead: 5, cacheWrite: 0, output: 7, reasoning: 0 });
    const exchange = rec.events.find((e) => e.type === 'http.exchange');
    if (exchange?.type !== 'http.exchange') throw new Error('no exchange');
    expect(exchange.payload.request.url).toContain('&q=1');
    const big = bodyText(rec, exchange.payload.response?.body);
    expect(JSON.parse(big).token).toBe(redactor.placeholder(plain));
    expect(JSON.parse(big).text).toBe(`Authorization: Bearer ${redactor.placeholder(plain)}`);
    expect(exchange.payload.response?.body?.size).toBe(Buffer.byteLength(big));
  });

  it('redacts user-configured headers, fields and patterns, and leaves allow-listed names alone', async () => {
    const dir = join(tempDir(), 'custom');
    const w = await createRecordingWriter(
      dir,
      init('custom', {
        redaction: {
          key: TEST_KEY,
          headers: ['x-tenant'],
          fields: ['ssn'],
          patterns: [/(?<=pin:)\d{4}/],
          allow: ['token'],
        },
      }),
    );
    w.append({
      type: 'tool.called',
      stepId: 1,
      payload: {
        kind: 'in-process',
        name: 't',
        stateType: 'API_CALL',
        args: { ssn: '123-45-6789', token: 'public-token', note: 'pin:4321' },
        mutating: false,
        latencyMs: 1,
      },
    });
    w.append({
      type: 'http.exchange',
      stepId: 1,
      payload: {
        exchangeId: 'x',
        request: { method: 'GET', url: 'http://h/', headers: { 'X-Tenant': 'acme-corp' } },
        startedAt: '2026-11-24T12:00:00.000Z',
        durationMs: 1,
      },
    });
    await w.close('complete');
    const events = readFileSync(join(dir, 'events.jsonl'), 'utf8');
    for (const secret of ['123-45-6789', '4321', 'acme-corp']) expect(events).not.toContain(secret);
    expect(events).toContain('public-token');
    expect((await readRecording(dir)).manifest.redaction.rules).toEqual(
      expect.arrayContaining(['header:x-tenant', 'field:ssn', 'allow:token']),
    );
  });
});

describe('redaction of the manifest', () => {
  it('keeps secrets in the agent command line and the database URL off disk', async () => {
    const dir = join(tempDir(), 'manifest');
    const w = await createRecordingWriter(
      dir,
      init('m', {
        agent: { command: ['node', 'a.mjs', '--token=c4n4ry-one', 'sk-proj-c4n4ry0123456789abcdef'], cwd: '/w' },
      }),
    );
    w.setManifest({ world: { db: { url: 'postgres://app:c4n4ry-two@127.0.0.1:5432/app', schemas: ['public'] } } });
    await w.close('complete');
    const text = readFileSync(join(dir, 'manifest.json'), 'utf8');
    expect(text).not.toMatch(/c4n4ry/);
    expect(text).toContain('postgres://app:[REDACTED:hmac:');
  });
});
