// Compressed answers are stored decoded whichever client read them (node:http hands the agent
// the compressed bytes, fetch decodes them), with both capture layers (plain and world capture),
// and the agent gets exactly what it would get unrecorded.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { bodyText, type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { FIXTURES, startServer, type TestServer, tempDir } from './helpers.js';

const ANSWER = JSON.stringify({ ok: true, text: 'compressed '.repeat(50) });
let server: TestServer;
const tmp = tempDir();
beforeAll(async () => {
  server = await startServer((req, _body, res) => {
    const br = req.url === '/br';
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': br ? 'br' : 'gzip' });
    res.end(br ? brotliCompressSync(ANSWER) : gzipSync(ANSWER));
  });
});
afterAll(async () => {
  await server.close();
  tmp.remove();
});

const AGENT = path.join(FIXTURES, 'encoded-agent.mjs');

describe('compressed responses', () => {
  // Asynchronous: the server answering the agent runs in this process.
  const plain = () =>
    new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [AGENT], { env: { ...process.env, TOOL_URL: server.url } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', () => resolve(out.trim()));
    });
  for (const world of [false, true]) {
    it(`are recorded decoded ${world ? 'with world capture (interceptors)' : 'without world capture'}`, async () => {
      const out = path.join(tmp.dir, `rec-${world}`);
      const ws = path.join(tmp.dir, `ws-${world}`);
      mkdirSync(ws, { recursive: true });
      let stdout = '';
      const result = await recordCommand({
        command: [process.execPath, AGENT],
        env: { TOOL_URL: server.url },
        out,
        ...(world ? { fsRoot: ws } : {}),
        stdio: 'pipe',
        onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
      });
      expect(result.exitCode).toBe(0);
      expect(stdout.trim()).toBe(await plain());
      const recording = await readRecording(out);
      const exchanges = recording.events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => e.payload as HttpExchangePayload);
      expect(exchanges).toHaveLength(4);
      for (const exchange of exchanges) expect(bodyText(recording, exchange.response?.body)).toBe(ANSWER);
    });
  }
});
