// Secrets inside binary bodies never reach the disk: a real agent, recorded by the real recorder,
// sends an env secret, a token-pattern key and a value first seen in a secret-named header inside
// an application/octet-stream body, a multipart upload (a binary file part beside a text field),
// a gRPC call and a binary WebSocket message; each real server on 127.0.0.1 echoes them back.
// Every file of the recording is searched for the secrets' bytes (as they are and as base64 at
// each alignment), every base64 field of events.jsonl is decoded and searched too; each body keeps
// its length (a protobuf's or a gRPC frame's length prefix stays true), and an exact replay with
// the same env matches every call.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { readRecording } from '../../src/recording/index.js';
import type { HttpExchangePayload, WebSocketExchangePayload } from '../../src/recording/types.js';
import { type GrpcServer, startGrpcServer } from '../replay/http2-helpers.js';
import { filesUnder } from '../support/files-under.js';
import { FIXTURES, recordAgent, replayExact, tempDir } from './helpers.js';

const hex = (n: number) => randomBytes(n).toString('hex');
// Fresh each run: a hit can only come from this run.
const KEY = `acme_live_${hex(12)}`;
const TOKEN = ['sk', 'proj', hex(16)].join('-');
const SESSION = `sess-${hex(10)}`;
const SECRETS = [KEY, TOKEN, SESSION];
const framed = (s: string) =>
  Buffer.concat([Buffer.from([0xff, 0x00, 0x80]), Buffer.from(s), Buffer.from([0xfe, 0x01])]);
const PAYLOAD = Buffer.concat(SECRETS.map(framed));

const tmp = tempDir('tapedeck-secret-binary-');
let api: http.Server;
let apiUrl = '';
let grpcServer: GrpcServer;
let wss: WebSocketServer;
let wsUrl = '';
const received: Buffer[] = [];

beforeAll(async () => {
  // Echoes each body's bytes back under the request's own content type.
  api = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      received.push(body);
      if (req.url === '/session') {
        res.writeHead(204, { 'x-session-token': SESSION });
        return res.end();
      }
      res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  grpcServer = await startGrpcServer();
  wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  wss.on('connection', (socket) =>
    socket.on('message', (data: Buffer) => {
      received.push(data);
      socket.send(data);
    }),
  );
  await new Promise((resolve) => wss.on('listening', resolve));
  wsUrl = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/bin`;
});
afterAll(async () => {
  api?.closeAllConnections();
  await new Promise((resolve) => api?.close(resolve));
  await grpcServer?.close();
  for (const c of wss?.clients ?? []) c.terminate();
  await new Promise((resolve) => wss?.close(resolve));
  tmp.remove();
});

/** A secret's forms in a stored file: its bytes, and its base64 at each alignment (the middle groups). */
function formsOf(secret: string): Buffer[] {
  const forms = [Buffer.from(secret)];
  for (let pad = 0; pad < 3; pad++) {
    const b64 = Buffer.concat([Buffer.alloc(pad), Buffer.from(secret)]).toString('base64');
    forms.push(Buffer.from(b64.slice(pad === 0 ? 0 : 4, -4)));
  }
  return forms;
}

/** Every base64 field of a JSON value (a body's `base64`, a base64 chunk's `data`), decoded. */
function decodedFields(value: unknown, out: Buffer[] = []): Buffer[] {
  if (Array.isArray(value)) for (const v of value) decodedFields(v, out);
  else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.base64 === 'string') out.push(Buffer.from(o.base64, 'base64'));
    if (o.encoding === 'base64' && typeof o.data === 'string') out.push(Buffer.from(o.data, 'base64'));
    for (const v of Object.values(o)) decodedFields(v, out);
  }
  return out;
}

/** Where any secret is found: in any file of `folder` (blobs included), or in a decoded base64 field of its events. */
function leaks(folder: string): string[] {
  const found: string[] = [];
  const files = filesUnder(folder);
  expect(files.some((f) => f.endsWith('events.jsonl'))).toBe(true);
  for (const file of files) {
    const bytes = readFileSync(file);
    for (const secret of SECRETS)
      for (const form of formsOf(secret)) if (bytes.includes(form)) found.push(`${file}: ${form}`);
    if (!file.endsWith('.jsonl')) continue;
    for (const line of bytes.toString('utf8').split('\n').filter(Boolean))
      for (const decoded of decodedFields(JSON.parse(line)))
        for (const secret of SECRETS) if (decoded.includes(secret)) found.push(`${file}: base64 field holds ${secret}`);
  }
  return found;
}

const env = () => ({
  ACME_API_KEY: KEY,
  EXTRA_ID: TOKEN,
  API_URL: apiUrl,
  GRPC_TARGET: grpcServer.target,
  WS_URL: wsUrl,
});

it('keeps secrets out of binary bodies, chunks and messages at their lengths, and an exact replay matches', {
  timeout: 180_000,
}, async () => {
  const out = path.join(tmp.dir, 'rec');
  const agent = path.join(FIXTURES, 'binary-secrets-agent.mjs');
  const run = await recordAgent(agent, out, env());
  expect(run.exitCode, run.stdout).toBe(0);
  // The servers really got every secret, in every kind of body, and echoed it whole.
  const got = Buffer.concat(received);
  for (const secret of SECRETS) expect(got.includes(secret)).toBe(true);
  expect(JSON.parse(run.stdout)).toMatchObject({
    octet: PAYLOAD.length,
    ws: PAYLOAD.length,
    grpc: `${KEY}|${TOKEN}`.length,
  });

  expect(leaks(out)).toEqual([]);

  const recording = await readRecording(out);
  const bytesOf = (body: { base64?: string; blob?: string; text?: string } | undefined) =>
    body?.base64 !== undefined
      ? Buffer.from(body.base64, 'base64')
      : body?.blob !== undefined
        ? recording.readBlob(body.blob)
        : Buffer.from(body?.text ?? '');
  const exchanges = recording.events
    .filter((e) => e.type === 'http.exchange')
    .map((e) => e.payload as HttpExchangePayload);
  const byPath = (p: string) => exchanges.find((x) => new URL(x.request.url).pathname === p);
  // Each body as long as what was sent, the masks equal where the secrets were equal (request and echo).
  const octet = byPath('/octet');
  expect(bytesOf(octet?.request.body)).toHaveLength(PAYLOAD.length);
  expect(bytesOf(octet?.request.body).equals(bytesOf(octet?.response?.body))).toBe(true);
  const upload = byPath('/upload');
  expect(bytesOf(upload?.request.body).length).toBe(upload?.request.body?.size);
  expect(bytesOf(upload?.request.body).equals(bytesOf(upload?.response?.body))).toBe(true);
  const grpc = byPath('/orders.Orders/Get');
  const frame = bytesOf(grpc?.request.body);
  // The gRPC frame's length prefix still counts the message's bytes.
  expect(frame.readUInt32BE(1)).toBe(frame.length - 5);
  // Its answer (a message holding non-UTF-8 bytes) is a stream of base64 chunks, masked too.
  expect(grpc?.response?.chunks?.some((c) => c.encoding === 'base64')).toBe(true);
  const turn = recording.events.find(
    (e) => e.type === 'websocket.exchange' && (e.payload as WebSocketExchangePayload).sent,
  );
  const sent = (turn?.payload as WebSocketExchangePayload | undefined)?.sent?.body;
  expect(bytesOf(sent)).toHaveLength(PAYLOAD.length);

  // The replayer has the same env: the live bodies redact to the recorded bytes.
  const replayOut = path.join(tmp.dir, 'replay');
  const replayed = await replayExact(out, replayOut, 'none', env());
  expect(replayed.divergences).toEqual([]);
  expect(replayed.exitCode).toBe(0);
  expect(leaks(replayOut)).toEqual([]);
});
