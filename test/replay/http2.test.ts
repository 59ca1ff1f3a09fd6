// HTTP/2 agents (node:http2 and @grpc/grpc-js over it) are recorded and replayed: a unary call, a
// POST body, a streamed answer, trailers, concurrent streams on one session and a refused stream,
// over TLS (h2, a self-signed certificate trusted through the client's `ca`) and cleartext (h2c);
// gRPC unary, server-streaming and failing calls exactly (status, metadata, messages). The replay
// answers from the recording with the real servers running and untouched (their hit counters).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { tempDir } from '../record/helpers.js';
import { type GrpcServer, type H2Server, startGrpcServer, startH2Server } from './http2-helpers.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const H2_AGENT = path.join(FIXTURES, 'http2-agent.mjs');
const GRPC_AGENT = path.join(FIXTURES, 'grpc-agent.mjs');

/** The agent run live (no tapedeck): what a faithful replay prints. (Not sync: the servers are in this process.) */
async function live(agent: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [agent], { env: { ...process.env, ...env } });
  return stdout.trim();
}

/** gRPC replays in the OS sandbox too (kept off its proxy), where there is one. */
const LEVELS = detectIsolation().level === 'bwrap' ? (['none', 'bwrap'] as const) : (['none'] as const);

/** An exact replay (by default with the in-process preload alone, the isolation every machine has). */
function replayExact(
  recording: string,
  out: string,
  env: Record<string, string>,
  isolation: 'bwrap' | 'none' = 'none',
) {
  return replay({ recording, mode: 'exact', out, stdio: 'pipe', isolation, env, timeoutMs: 60_000 });
}

async function exchanges(dir: string): Promise<HttpExchangePayload[]> {
  const rec = await readRecording(dir);
  return rec.events.filter((e) => e.type === 'http.exchange').map((e) => e.payload as HttpExchangePayload);
}

describe('node:http2', () => {
  const tmp = tempDir('tapedeck-http2-');
  let h2: H2Server;
  let h2c: H2Server;
  let env: Record<string, string>;

  beforeAll(async () => {
    h2 = await startH2Server({ tls: { dir: tmp.dir } });
    h2c = await startH2Server();
    env = { H2_URL: h2.url, H2_CA: h2.caFile ?? '', H2C_URL: h2c.url };
  });
  afterAll(async () => {
    await h2?.close();
    await h2c?.close();
    tmp.remove();
  });

  it('records h2 and h2c streams (headers, body, chunks, trailers, resets) and replays them exactly with 0 hits', {
    timeout: 120_000,
  }, async () => {
    const expected = await live(H2_AGENT, env);
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordCommand({ command: [process.execPath, H2_AGENT], env, out, stdio: 'pipe' });
    expect(recorded.exitCode).toBe(0);
    // An HTTP/2 connection that was recorded is not named as unrecorded.
    expect(recorded.unrecorded ?? []).toEqual([]);
    expect((await readRecording(out)).manifest.unrecorded).toBeUndefined();

    const xs = await exchanges(out);
    for (const [protocol, base] of [
      ['h2', h2.url],
      ['h2c', h2c.url],
    ] as const) {
      const mine = xs.filter((x) => x.protocol === protocol);
      expect(mine.map((x) => `${x.request.method} ${x.request.url}`).sort()).toEqual(
        ['/c/1', '/c/2', '/c/3', '/events', '/refuse', '/trailers', '/unary?q=1']
          .map((p) => `GET ${base}${p}`)
          .concat(`POST ${base}/echo`)
          .sort(),
      );
      const by = (p: string) => mine.find((x) => new URL(x.request.url).pathname === p);
      expect(by('/unary')?.request.headers).toMatchObject({ ':method': 'GET', ':path': '/unary?q=1' });
      expect(by('/unary')?.response).toMatchObject({ status: 201, headers: { 'x-reply': '/unary?q=1' } });
      expect(by('/echo')?.request.body?.text).toBe('{"sku":"A-1"}');
      expect(by('/events')?.response?.chunks?.map((c) => c.data)).toEqual([
        'data: 1\n\n',
        'data: 2\n\n',
        'data: 3\n\n',
      ]);
      expect(by('/trailers')?.response?.trailers).toEqual({ 'x-checksum': 'c0ffee', 'x-count': '1' });
      expect(by('/refuse')?.error?.message).toContain('NGHTTP2_REFUSED_STREAM');
    }

    const hits = [h2.hits(), h2c.hits()];
    const replayed = await replayExact(out, path.join(tmp.dir, 'replay'), env);
    expect(replayed.divergences, replayed.output?.stderr).toEqual([]);
    expect(replayed.exitCode).toBe(0);
    expect(replayed.output?.stdout.trim()).toBe(expected);
    expect(JSON.parse(expected).h2.trailers.trailers).toEqual({ 'x-checksum': 'c0ffee', 'x-count': '1' });
    expect([h2.hits(), h2c.hits()]).toEqual(hits);
    // The replay's own recording keeps what HTTP/2 carried.
    const again = await exchanges(path.join(tmp.dir, 'replay'));
    expect(again.find((x) => x.request.url.endsWith('/trailers'))).toMatchObject({
      protocol: expect.stringMatching(/^h2c?$/),
      response: { trailers: { 'x-checksum': 'c0ffee' } },
    });

    // A request the recording never saw goes to the answer chain: in exact mode it is held back
    // (the agent's stream is reset) and reported, and still nothing real is touched.
    const extra = await replayExact(out, path.join(tmp.dir, 'replay-extra'), { ...env, H2_EXTRA: '/never-recorded' });
    expect(extra.exitCode).toBe(0);
    const seen = JSON.parse(extra.output?.stdout.trim() ?? '{}');
    expect(seen.h2.extra.error).toMatch(/ERR_HTTP2_STREAM_ERROR/);
    expect(seen.h2.unary).toEqual(JSON.parse(expected).h2.unary);
    expect(extra.divergences.length).toBeGreaterThan(0);
    expect([h2.hits(), h2c.hits()]).toEqual(hits);
  });
});

describe('gRPC (@grpc/grpc-js)', () => {
  const tmp = tempDir('tapedeck-grpc-');
  const servers: GrpcServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
    tmp.remove();
  });

  for (const secure of [false, true]) {
    it(`records unary, server-streaming and failing calls (${secure ? 'TLS' : 'insecure'}) and replays them exactly with 0 hits`, {
      timeout: 120_000,
    }, async () => {
      const server = await startGrpcServer(secure ? { tls: { dir: tmp.dir } } : {});
      servers.push(server);
      const env: Record<string, string> = {
        GRPC_TARGET: server.target,
        ...(server.caFile ? { GRPC_CA_PEM: readFileSync(server.caFile, 'utf8') } : {}),
      };
      const expected = await live(GRPC_AGENT, env);
      expect(JSON.parse(expected)).toMatchObject({
        unary: { order: { sku: 'A-1', blob: '00ff0180' }, header: 'orders-acme' },
        stream: { code: 0, trailer: '3' },
        failed: { code: 5, details: 'no order missing' },
      });
      const out = path.join(tmp.dir, `rec-${secure}`);
      const recorded = await recordCommand({ command: [process.execPath, GRPC_AGENT], env, out, stdio: 'pipe' });
      expect(recorded.exitCode).toBe(0);
      const xs = await exchanges(out);
      expect(xs.map((x) => new URL(x.request.url).pathname)).toEqual([
        '/orders.Orders/Get',
        '/orders.Orders/Watch',
        '/orders.Orders/Get',
      ]);
      expect(xs.every((x) => x.protocol === (secure ? 'h2' : 'h2c'))).toBe(true);
      // gRPC's status lives in the trailers; its binary messages are recorded as base64 chunks.
      expect(xs[1]?.response?.trailers).toMatchObject({ 'grpc-status': '0', 'x-total': '3' });
      // A failed call is gRPC's trailers-only answer: the status in the one block of headers.
      expect({ ...xs[2]?.response?.headers, ...xs[2]?.response?.trailers }).toMatchObject({
        'grpc-status': '5',
        'grpc-message': 'no%20order%20missing',
      });
      expect(xs[0]?.response?.chunks?.some((c) => c.encoding === 'base64')).toBe(true);

      const hits = server.hits();
      for (const isolation of LEVELS) {
        const replayed = await replayExact(out, path.join(tmp.dir, `replay-${secure}-${isolation}`), env, isolation);
        expect(replayed.divergences, `${isolation}: ${replayed.output?.stderr}`).toEqual([]);
        expect(replayed.exitCode).toBe(0);
        expect(replayed.output?.stdout.trim()).toBe(expected);
        expect(server.hits()).toBe(hits);
      }
    });
  }
});
