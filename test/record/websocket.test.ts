// A WebSocket conversation is recorded, whatever client holds it (the ws package, undici's
// WebSocket), with or without world capture: the upgrade and its 101, then one step per message the
// agent sends with the server's messages until its next one (text and binary, in order, with their
// offsets and the values drawn when each came), the server's push before the first message in the
// open step, the close codes. The Authorization header of the upgrade never reaches the disk, and
// the conversation is no longer named as unrecorded.
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptFor } from '../../sandbox/preload/shared-websocket.mjs';
import {
  readRecording,
  type UnrecordedConnection,
  unrecordedWarning,
  type WebSocketExchangePayload,
} from '../../src/recording/index.js';
import { FIXTURES, tempDir } from './helpers.js';
import { allText, CONVERSATION, recordConversation, startWsServer, TOKEN, type WsServer } from './websocket-helpers.js';

describe('recording a WebSocket conversation', () => {
  const tmp = tempDir('tapedeck-ws-record-');
  let server: WsServer;
  beforeAll(async () => {
    server = await startWsServer();
  });
  afterAll(async () => {
    await server.close();
    tmp.remove();
  });

  for (const client of ['ws', 'undici'] as const) {
    it(`records each turn of a ${client} client's conversation as a step`, { timeout: 120_000 }, async () => {
      const out = path.join(tmp.dir, client);
      const { result, got } = await recordConversation(out, server.url, { CLIENT: client });
      expect(result.exitCode).toBe(0);
      // The agent got its real answers: recording changes nothing of what it sees.
      expect(got.map((g, i) => (i === 2 ? g.slice(0, 9) : g))).toEqual(CONVERSATION);
      const recording = await readRecording(out);
      expect(recording.warnings).toEqual([]);
      expect(recording.manifest.unrecorded).toBeUndefined();
      const turns = recording.events.flatMap((e) => (e.type === 'websocket.exchange' ? [e.payload] : []));
      expect(turns.map((t) => [t.turn, t.kind])).toEqual([
        [0, 'open'],
        [1, 'message'],
        [2, 'message'],
        [3, 'message'],
        [4, 'message'],
        [5, 'close'],
      ]);
      expect(new Set(turns.map((t) => t.connectionId)).size).toBe(1);
      const [open, hello, sum, bytes, , close] = turns as WebSocketExchangePayload[] &
        [WebSocketExchangePayload, WebSocketExchangePayload, WebSocketExchangePayload, WebSocketExchangePayload];
      expect(open?.url).toBe(server.url);
      expect(open?.response?.status).toBe(101);
      // The server's push before the agent's first message is the open step's.
      expect(open?.received.map((m) => [m.type, m.body?.text])).toEqual([['text', 'welcome']]);
      expect(hello?.sent).toMatchObject({ type: 'text', body: { text: 'hello' } });
      expect(hello?.received.map((m) => m.body?.text)).toEqual(['echo hello']);
      expect(JSON.parse(sum?.sent?.body?.text ?? '')).toMatchObject({ op: 'sum', args: [1, 2] });
      expect(bytes?.sent).toMatchObject({
        type: 'binary',
        body: { base64: Buffer.from([1, 2, 3, 255]).toString('base64') },
      });
      expect(bytes?.received).toMatchObject([
        { type: 'binary', body: { base64: Buffer.from([255, 3, 2, 1]).toString('base64') } },
      ]);
      expect(close).toMatchObject({ sent: { type: 'close', code: 1000, reason: 'done' }, closed: true });
      expect(close?.received.map((m) => [m.type, m.code])).toEqual([['close', 1000]]);
      // Offsets within the turn, and what the agent had drawn when a server message came (the
      // JSON request's id is a Math.random draw made before its answer).
      for (const t of turns) for (const m of t.received) expect(m.offsetMs).toBeLessThanOrEqual(t.durationMs);
      expect(sum?.received[0]?.drawn?.counts.random).toBe(1);
      // Steps: the open and each message, API_CALLs named after the path, in turn order.
      const steps = recording.events.filter((e) => e.type === 'step.started');
      expect(steps.map((e) => [e.payload.stateType, e.payload.name])).toEqual([
        ['API_CALL', 'WS open /live'],
        ['API_CALL', 'WS /live'],
        ['API_CALL', 'WS /live'],
        ['API_CALL', 'WS /live'],
        ['API_CALL', 'WS /live'],
        ['API_CALL', 'WS close /live'],
      ]);
      const tools = recording.events.flatMap((e) => (e.type === 'tool.called' ? [e.payload] : []));
      expect(tools[2]).toMatchObject({ kind: 'websocket', args: { op: 'sum' }, result: { sum: 3 } });
      // The secret went to the server, never to the disk: the upgrade's header is a placeholder.
      expect(server.seen.at(-1)).toBe(`Bearer ${TOKEN}`);
      expect(open?.request?.headers.authorization).toMatch(/^Bearer \[REDACTED:hmac:[0-9a-f]{12}\]$/);
      expect(allText(out)).not.toContain(TOKEN);
    });
  }

  it('with world capture (the interceptors hold node:http) the conversation is recorded too', {
    timeout: 120_000,
  }, async () => {
    const root = path.join(tmp.dir, 'root');
    mkdirSync(root, { recursive: true });
    const out = path.join(tmp.dir, 'fs');
    const { result, got } = await recordConversation(out, server.url, {}, root);
    expect(result.exitCode).toBe(0);
    expect(got.at(-1)).toBe('closed 1000');
    const recording = await readRecording(out);
    const turns = recording.events.flatMap((e) => (e.type === 'websocket.exchange' ? [e.payload] : []));
    expect(turns.map((t) => t.kind)).toEqual(['open', 'message', 'message', 'message', 'message', 'close']);
    expect(recording.manifest.unrecorded).toBeUndefined();
  });

  it('in the ledger its turns are API_CALL tool steps, and an MCP tools/call sent over it is an MCP_CALL named after its tool', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(tmp.dir, 'mcp');
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_weather', arguments: { city: 'Oslo' } },
    };
    const { result } = await recordConversation(out, server.url, { MESSAGE: JSON.stringify(call) });
    expect(result.exitCode).toBe(0);
    const recording = await readRecording(out);
    const { buildLedger } = await import('../../src/ledger/index.js');
    const ledger = buildLedger(recording);
    expect(ledger.steps.map((s) => [s.step_id, s.state_type])).toEqual([
      [1, 'API_CALL'],
      [2, 'API_CALL'],
      [3, 'API_CALL'],
      [4, 'API_CALL'],
      [5, 'MCP_CALL'],
      [6, 'API_CALL'],
    ]);
    expect(ledger.tools.map((t) => [t.tool_type, t.tool_name])).toEqual([
      ['websocket', 'WS open /live'],
      ['websocket', 'WS /live'],
      ['websocket', 'WS /live'],
      ['websocket', 'WS /live'],
      ['mcp', 'get_weather'],
      ['websocket', 'WS close /live'],
    ]);
    const tool = recording.events.flatMap((e) => (e.type === 'tool.called' && e.stepId === 5 ? [e.payload] : []))[0];
    expect(tool).toMatchObject({
      kind: 'mcp',
      name: 'get_weather',
      args: { city: 'Oslo' },
      result: { content: [{ type: 'text', text: 'sunny' }] },
      mutating: true,
    });
  });

  it('a connection that stops carrying frames it can read is named as not recorded whole', {
    timeout: 120_000,
  }, async () => {
    // A server that answers the upgrade and then sends a compressed frame it never negotiated.
    const raw = net.createServer((socket) => {
      let head = '';
      socket.on('data', (d: Buffer) => {
        head += d.toString('latin1');
        const key = /sec-websocket-key:\s*(\S+)/i.exec(head)?.[1];
        if (!head.includes('\r\n\r\n') || key === undefined) return;
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptFor(key)}\r\n\r\n`,
        );
        socket.write(Buffer.from([0xc1, 0x02, 0x68, 0x69]));
      });
      socket.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(raw.address() as net.AddressInfo).port}/feed`;
    try {
      const { recordCommand } = await import('../../src/record/index.js');
      const out = path.join(tmp.dir, 'broken');
      let stdout = '';
      const result = await recordCommand({
        command: [
          process.execPath,
          path.join(FIXTURES, '..', '..', 'replay', 'fixtures', 'websocket-headers-agent.mjs'),
        ],
        env: { WS_URL: url },
        out,
        stdio: 'pipe',
        onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
      });
      expect(result.exitCode).toBe(0);
      expect(stdout).toMatch(/RSV1/);
      const recording = await readRecording(out);
      const turns = recording.events.flatMap((e) => (e.type === 'websocket.exchange' ? [e.payload] : []));
      // The open is recorded; the connection is not said to have ended there.
      expect(turns.map((t) => [t.kind, t.response?.status, t.closed])).toEqual([['open', 101, undefined]]);
      expect(recording.manifest.unrecorded).toEqual([
        { kind: 'upgrade', protocol: 'websocket', target: url, connections: 1 },
      ]);
      expect(unrecordedWarning(recording.manifest.unrecorded?.[0] as UnrecordedConnection)).toMatch(
        /^not recorded whole: a WebSocket at ws:\/\/127\.0\.0\.1:\d+\/feed: tapedeck could not read what followed/,
      );
    } finally {
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  it('in-process (record()), a run records the conversation its own code holds', { timeout: 60_000 }, async () => {
    const { record } = await import('../../src/record/index.js');
    const { default: WebSocket } = await import('ws');
    const run = await record({ out: path.join(tmp.dir, 'in-process') }, async () => {
      const socket = new WebSocket(server.url);
      const got: string[] = [];
      await new Promise<void>((resolve) => {
        socket.on('message', (m) => {
          got.push(String(m));
          if (got.length === 1) socket.send('hello');
          else socket.close(1000, 'done');
        });
        socket.on('close', () => resolve());
      });
      return got;
    });
    expect(run.result).toEqual(['welcome', 'echo hello']);
    const recording = await readRecording(run.dir);
    const turns = recording.events.flatMap((e) =>
      e.type === 'websocket.exchange' ? [[e.stepId, e.payload.kind]] : [],
    );
    expect(turns).toEqual([
      [1, 'open'],
      [2, 'message'],
      [3, 'close'],
    ]);
    expect(recording.manifest.unrecorded).toBeUndefined();
  });
});
