// The replay's WebSocket server: an agent's WebSocket is answered from the recording, with no
// network. The agent's connection to a recorded WebSocket's host:port is routed here (the
// preload's network guard, and in the OS sandbox a port opened inside; a client behind the
// sandbox's proxy reaches it through the proxy's upgrade), whatever client opened it. The upgrade
// is matched to the next recorded conversation with its URL and answered with the recorded
// response (its Sec-WebSocket-Accept computed for the agent's key); then the server's messages
// of each turn are sent as the agent's message that opens the turn arrives, in order. A message
// that is not the recorded one (or one past the recording) is a divergence: it is held back and
// the connection closed with a reason, so the agent never waits for an answer that will not come.
// Each turn is a step of the replay, written by the session (ReplaySession.webSocketTurn).
import net from 'node:net';
import tls from 'node:tls';
import { sameHost } from '../../sandbox/preload/network-guard.mjs';
import {
  acceptFor,
  closePayload,
  frameReader,
  serverFrame,
  splitHead,
  type WsMessage,
} from '../../sandbox/preload/shared-websocket.mjs';
import type { Turn, TurnMessage } from '../record/websocket.js';
import type {
  Body,
  DivergencePayload,
  Recording,
  WebSocketExchangePayload,
  WebSocketMessage,
} from '../recording/index.js';
import { masksForMatching } from '../recording/index.js';

/** One recorded turn and the step it was. */
export interface RecordedTurn {
  payload: WebSocketExchangePayload;
  step: number;
  parentStepId?: number;
  toolCallId?: string;
  route?: string;
}

export interface RecordedConversation {
  connectionId: string;
  url: URL;
  turns: RecordedTurn[];
}

/** What the answerer asks of the replay: a turn written as a step (with its divergence, if any). */
export interface WebSocketSink {
  /** The agent's message as the recording would keep it (redacted), to compare with the recorded one. */
  stored(data: string | Uint8Array): Body;
  readBlob(sha256: string): Buffer;
  turn(turn: Turn, recorded: RecordedTurn | undefined, divergence?: DivergencePayload): void;
  /** Resolves once the replay has served the recorded calls before recorded step `step` (bounded). */
  reached(step: number): Promise<void>;
  /** until K: whether the turn of recorded step `step` is past K (then the replay stops, the agent with it). */
  stops?(step: number): boolean;
  /** --timing: a turn's server messages come at their recorded offsets times this (0 or none: at once). */
  pace?: number;
}

/** A close code and reason the agent sees when its message is held back. */
export const HELD_BACK_CLOSE = { code: 1008, reason: 'tapedeck replay: this message is not in the recording' };

/** The recorded WebSocket conversations, by connection, each turn with its step. */
export function recordedConversations(recording: Recording): RecordedConversation[] {
  const heads = new Map<number, { parentStepId?: number; toolCallId?: string; route?: string }>();
  const byId = new Map<string, RecordedConversation>();
  for (const e of recording.events) {
    if (e.type === 'step.started')
      heads.set(e.stepId, {
        ...(e.parentStepId === undefined ? {} : { parentStepId: e.parentStepId }),
        ...(e.payload.toolCallId === undefined ? {} : { toolCallId: e.payload.toolCallId }),
        ...(e.payload.route === undefined ? {} : { route: e.payload.route }),
      });
    if (e.type !== 'websocket.exchange') continue;
    let url: URL;
    try {
      url = new URL(e.payload.url);
    } catch {
      continue;
    }
    let conversation = byId.get(e.payload.connectionId);
    if (conversation === undefined) {
      conversation = { connectionId: e.payload.connectionId, url, turns: [] };
      byId.set(e.payload.connectionId, conversation);
    }
    conversation.turns.push({ payload: e.payload, step: e.stepId, ...heads.get(e.stepId) });
  }
  const out = [...byId.values()];
  for (const c of out) c.turns.sort((a, b) => a.payload.turn - b.payload.turn);
  // Complete conversations only from their open: a recording cut short may lack it.
  return out.filter((c) => c.turns[0]?.payload.kind === 'open');
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');
/** A URL's port, its scheme's when none is written. */
const portOf = (url: URL) => Number(url.port) || (url.protocol === 'wss:' || url.protocol === 'https:' ? 443 : 80);

/** The host:port each recorded conversation connected to; `tls`: a wss:// one's. */
export function webSocketTargets(
  conversations: readonly RecordedConversation[],
): Array<{ host: string; port: number; tls: boolean }> {
  const out: Array<{ host: string; port: number; tls: boolean }> = [];
  for (const { url } of conversations) {
    const host = hostOf(url);
    const port = portOf(url);
    if (!out.some((t) => t.port === port && sameHost(t.host, host)))
      out.push({ host, port, tls: url.protocol === 'wss:' });
  }
  return out;
}

export interface WebSocketTapes {
  /** Where the answerer listens (127.0.0.1). */
  address: { host: string; port: number };
  /**
   * Where it listens for each wss:// target (`host:port` as webSocketTargets names it): TLS with a
   * certificate of `caPem` for the host the agent names (SNI), else for the target's host (an IP
   * address, which a client does not send as SNI).
   */
  tlsAddresses: Map<string, { host: string; port: number }>;
  caPem?: string;
  /** Takes one connection (a routed socket, or the proxy's upstream for an upgrade). */
  serve(socket: net.Socket): void;
  /** A socket connected to the answerer, for the proxy's upgrades. */
  connect(): Promise<net.Socket>;
  close(): Promise<void>;
}

/** Starts the answerer for a recording's conversations. */
export async function startWebSocketTapes(
  conversations: readonly RecordedConversation[],
  sink: WebSocketSink,
): Promise<WebSocketTapes> {
  const used = new Set<string>();
  const sockets = new Set<net.Socket>();
  const serve = (socket: net.Socket, scheme: 'ws' | 'wss' = 'ws') => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    answerConnection(socket, scheme, conversations, used, sink);
  };
  const listen = async (server: net.Server) => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return { host: '127.0.0.1', port: (server.address() as net.AddressInfo).port };
  };
  const server = net.createServer((socket) => serve(socket));
  const servers: net.Server[] = [server];
  const address = await listen(server);
  // wss://: TLS with a certificate of a CA of the answerer's own; the agent's TLS connections to
  // these addresses trust it (the preload's trustRoutedTls).
  const tlsAddresses = new Map<string, { host: string; port: number }>();
  let caPem: string | undefined;
  const secureTargets = webSocketTargets(conversations).filter((t) => t.tls);
  if (secureTargets.length > 0) {
    const { createRunCa } = await import('../../sandbox/proxy/ca.js');
    const ca = await createRunCa('tapedeck replay WebSocket CA');
    caPem = ca.certPem;
    for (const target of secureTargets) {
      // TLS over each accepted socket (not tls.Server): a client names an IP address in no SNI, and
      // the certificate must then be the target's, given as the socket's own context.
      const secureContext = await ca.contextFor(target.host);
      const tlsServer = net.createServer((raw) => {
        const socket = new tls.TLSSocket(raw, {
          isServer: true,
          secureContext,
          SNICallback: (servername, cb) =>
            ca.contextFor(servername || target.host).then(
              (context) => cb(null, context),
              (error: Error) => cb(error),
            ),
        });
        socket.on('error', () => raw.destroy());
        socket.once('secure', () => serve(socket, 'wss'));
      });
      servers.push(tlsServer);
      tlsAddresses.set(`${target.host}:${target.port}`, await listen(tlsServer));
    }
  }
  return {
    address,
    tlsAddresses,
    ...(caPem === undefined ? {} : { caPem }),
    serve,
    connect: () =>
      new Promise((resolve, reject) => {
        const socket = net.connect(address.port, address.host, () => resolve(socket));
        socket.once('error', reject);
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

const MAX_HEAD = 64 * 1024;

/** The bytes a recorded message carries. */
function bytesOf(message: WebSocketMessage, sink: WebSocketSink): Buffer {
  if (message.type === 'close') return closePayload(message.code, message.reason);
  // A control frame carries at most 125 bytes (a recording is not trusted to keep to it).
  if (message.type === 'ping' || message.type === 'pong') return dataOf(message, sink).subarray(0, 125);
  return dataOf(message, sink);
}

function dataOf(message: WebSocketMessage, sink: WebSocketSink): Buffer {
  const body = message.body;
  if (body === undefined) return Buffer.alloc(0);
  if (body.text !== undefined) return Buffer.from(body.text, 'utf8');
  if (body.base64 !== undefined) return Buffer.from(body.base64, 'base64');
  if (body.blob !== undefined) return sink.readBlob(body.blob);
  return Buffer.alloc(0);
}

function safely(read: () => Buffer): Buffer | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Whether the agent's message is the recorded one (compared as the recording keeps it: redacted). */
function sameMessage(actual: WsMessage, recorded: WebSocketMessage | undefined, sink: WebSocketSink): boolean {
  if (recorded === undefined || recorded.type !== actual.type) return false;
  if (actual.type === 'close') return (actual.code ?? undefined) === recorded.code;
  const mine = sink.stored(actual.type === 'text' ? actual.data.toString('utf8') : actual.data);
  const theirs = recorded.body;
  if (
    mine.size === (theirs?.size ?? 0) &&
    (mine.text ?? mine.base64 ?? mine.blob) === (theirs?.text ?? theirs?.base64 ?? theirs?.blob)
  )
    return true;
  // Bytes with masks: the agent sends the placeholder it was served where the recording holds a
  // secret's mask, as long as the secret (masksForMatching).
  if (mine.text !== undefined || theirs?.text !== undefined) return false;
  const masked = (body: Body) =>
    masksForMatching(dataOf({ type: 'binary', offsetMs: 0, body }, sink).toString('latin1'));
  return theirs !== undefined && masked(mine) === masked(theirs);
}

/** A short, one-line view of a message for a divergence. */
function describe(message: { type: string; data?: string | undefined; code?: number | undefined }): string {
  if (message.type === 'close') return `a close (${message.code ?? 'no code'})`;
  const data = message.data ?? '';
  return `a ${message.type} message ${JSON.stringify(data.length > 120 ? `${data.slice(0, 120)}…` : data)}`;
}

function recordedView(
  message: WebSocketMessage | undefined,
): { type: string; data?: string; code?: number } | undefined {
  if (message === undefined) return undefined;
  return {
    type: message.type,
    ...(message.body?.text !== undefined
      ? { data: message.body.text }
      : message.body?.base64 !== undefined
        ? { data: message.body.base64 }
        : {}),
    ...(message.code === undefined ? {} : { code: message.code }),
  };
}

function answerConnection(
  socket: net.Socket,
  scheme: 'ws' | 'wss',
  conversations: readonly RecordedConversation[],
  used: Set<string>,
  sink: WebSocketSink,
): void {
  let head = Buffer.alloc(0);
  const onHead = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const split = splitHead(head);
    if (split === undefined) {
      if (head.length > MAX_HEAD) socket.destroy();
      return;
    }
    socket.off('data', onHead);
    upgrade(split.start, split.headers, split.rest);
  };
  socket.on('data', onHead);

  const upgrade = (start: string, headers: Record<string, string>, rest: Buffer) => {
    const [method = 'GET', target = '/'] = start.split(' ');
    const host = headers.host ?? '';
    let asked: URL;
    try {
      asked = new URL(target.startsWith('/') ? `${scheme}://${host}${target}` : target.replace(/^http/, 'ws'));
    } catch {
      socket.destroy();
      return;
    }
    const samePath = (c: RecordedConversation) =>
      !used.has(c.connectionId) && c.url.pathname + c.url.search === asked.pathname + asked.search;
    // The same host, port and path; else the same path (through the proxy the scheme is not known).
    const conversation =
      conversations.find(
        (c) => samePath(c) && sameHost(hostOf(c.url), hostOf(asked)) && portOf(c.url) === portOf(asked),
      ) ?? conversations.find(samePath);
    const now = Date.now();
    const url = conversation?.url.href ?? asked.href;
    const request = { method, url, headers };
    if (conversation === undefined) {
      socket.end(
        'HTTP/1.1 502 Bad Gateway\r\nx-tapedeck-refused: websocket\r\ncontent-length: 0\r\nconnection: close\r\n\r\n',
      );
      sink.turn(
        {
          exchangeId: `replay-ws-${asked.href}`,
          connectionId: `replay-ws-${asked.href}`,
          turn: 0,
          url: asked.href,
          kind: 'open',
          ts: now,
          end: now,
          request,
          response: { status: 502, headers: { 'x-tapedeck-refused': 'websocket' } },
          received: [],
          closed: true,
          servedFrom: 'blocked',
        },
        undefined,
        {
          kind: 'unmatched-request',
          actual: { url: asked.href },
          message: `The agent opened a WebSocket at ${asked.href}, which the recording does not have; it was refused (no network in a replay).`,
        },
      );
      return;
    }
    used.add(conversation.connectionId);
    const open = conversation.turns[0] as RecordedTurn;
    const recordedResponse = open.payload.response;
    // The recording is data: a status out of range, or a header that would end its line, is not written as it is.
    const given = recordedResponse?.status ?? 502;
    const status = Number.isInteger(given) && given >= 101 && given <= 599 ? given : 502;
    const reason = (recordedResponse?.statusText ?? (status === 101 ? 'Switching Protocols' : 'Refused')).replace(
      /[^\t\x20-\x7e]/g,
      '',
    );
    const lines = [`HTTP/1.1 ${status} ${reason}`];
    for (const [name, value] of Object.entries(recordedResponse?.headers ?? {})) {
      const lower = name.toLowerCase();
      // The accept is the agent's key's; no extension is ever in use (the recorder took the offer out).
      if (lower === 'sec-websocket-accept' || lower === 'sec-websocket-extensions' || lower === 'content-length')
        continue;
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) continue;
      lines.push(`${name}: ${value.replace(/[\r\n\0]/g, ' ')}`);
    }
    if (status === 101) lines.push(`Sec-WebSocket-Accept: ${acceptFor(headers['sec-websocket-key'] ?? '')}`);
    else lines.push('content-length: 0', 'connection: close');
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    const pace = sink.pace ?? 0;
    /**
     * Serves a recorded turn: false when until K stopped the replay before it. The connection is
     * then left as it is, unanswered: the agent is being ended, and a cut would reach its code first.
     */
    const served = async (turn: RecordedTurn, sent: TurnMessage | undefined): Promise<boolean> => {
      if (sink.stops?.(turn.step)) return false;
      const at = Date.now();
      try {
        for (const message of turn.payload.received) {
          // --timing: each at its recorded offset from the turn's start (scaled).
          const wait = pace > 0 ? at + message.offsetMs * pace - Date.now() : 0;
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          if (socket.destroyed) return false;
          socket.write(serverFrame(message.type, bytesOf(message, sink)));
        }
      } catch {
        // A message's blob that cannot be read: the connection ends rather than the replay.
        socket.destroy();
        return false;
      }
      sink.turn(
        {
          exchangeId: `replay-${turn.payload.exchangeId}`,
          connectionId: `replay-${conversation.connectionId}`,
          turn: turn.payload.turn,
          url: conversation.url.href,
          kind: turn.payload.kind,
          ts: at,
          end: Date.now(),
          ...(turn.payload.kind === 'open'
            ? { request, ...(recordedResponse ? { response: recordedResponse } : {}) }
            : {}),
          sent,
          received: turn.payload.received.map((m) => ({
            type: m.type,
            offsetMs: 0,
            data: m.type === 'close' ? undefined : (m.body?.text ?? safely(() => bytesOf(m, sink))),
            code: m.code,
            reason: m.reason,
          })),
          closed: turn.payload.closed,
          servedFrom: 'recording',
        },
        turn,
      );
      if (turn.payload.closed) socket.end();
      return true;
    };
    const opened = served(open, undefined);
    if (status !== 101 || open.payload.closed) {
      void opened.then(() => socket.end());
      return;
    }
    let next = 1;
    let done = false;
    // One thing at a time, in order: the open, the agent's messages and the pushes between them.
    let chain: Promise<void> = opened.then((ok) => {
      if (!ok) done = true;
    });
    const later = (task: () => Promise<void> | void) => {
      chain = chain.then(task).catch(() => {
        socket.destroy();
      });
    };
    // The server's pushes after a turn (sent when the agent had gone on to another call): once the
    // replay has served the recorded calls before them again.
    const pushes = async () => {
      for (let push = conversation.turns[next]; push?.payload.kind === 'push'; push = conversation.turns[next]) {
        await sink.reached(push.step);
        if (done || socket.destroyed) return;
        next++;
        if (push.payload.closed) done = true;
        if (!(await served(push, undefined))) done = true;
      }
    };
    later(pushes);
    const reader = frameReader(
      (message) => later(() => answer(message)),
      () => socket.destroy(),
    );
    const answer = async (message: WsMessage) => {
      if (done) return;
      if (message.type === 'ping') {
        socket.write(serverFrame('pong', message.data));
        return;
      }
      if (message.type === 'pong') return;
      const sent: TurnMessage = {
        type: message.type,
        offsetMs: 0,
        data:
          message.type === 'close' ? undefined : message.type === 'text' ? message.data.toString('utf8') : message.data,
        code: message.code,
        reason: message.reason,
      };
      const expected = conversation.turns[next];
      if (expected !== undefined && sameMessage(message, expected.payload.sent, sink)) {
        next++;
        if (expected.payload.closed) done = true;
        if (!(await served(expected, sent))) {
          done = true;
          return;
        }
        await pushes();
        return;
      }
      // Not the recorded message: held back, and the connection closed so the agent does not wait.
      done = true;
      const at = Date.now();
      const actual = {
        type: message.type,
        ...(message.type === 'close'
          ? { code: message.code }
          : { data: message.type === 'text' ? message.data.toString('utf8') : message.data.toString('base64') }),
      };
      const wanted = recordedView(expected?.payload.sent);
      socket.end(serverFrame('close', closePayload(HELD_BACK_CLOSE.code, HELD_BACK_CLOSE.reason)));
      sink.turn(
        {
          exchangeId: `replay-${conversation.connectionId}-${next}`,
          connectionId: `replay-${conversation.connectionId}`,
          turn: next,
          url: conversation.url.href,
          kind: message.type === 'close' ? 'close' : 'message',
          ts: at,
          end: at,
          sent,
          received: [{ type: 'close', offsetMs: 0, code: HELD_BACK_CLOSE.code, reason: HELD_BACK_CLOSE.reason }],
          closed: true,
          servedFrom: 'blocked',
        },
        expected,
        wanted === undefined
          ? {
              kind: 'extra-call',
              actual,
              message: `The agent sent ${describe(actual)} on the WebSocket at ${conversation.url.href} after the recorded conversation ended; it was held back and the connection closed.`,
            }
          : {
              kind: 'different-request',
              expected: wanted,
              actual,
              fieldDiff: [{ path: `websocket.turn[${next}].sent`, expected: wanted, actual }],
              message: `The agent sent ${describe(actual)} on the WebSocket at ${conversation.url.href} where the recording has ${describe(wanted)} (turn ${next}); it was held back and the connection closed.`,
            },
      );
    };
    socket.on('data', (chunk: Buffer) => reader.feed(chunk));
    if (rest.length > 0) reader.feed(rest);
  };
}
