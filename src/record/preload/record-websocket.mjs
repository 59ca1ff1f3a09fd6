// @ts-check
// A WebSocket conversation, recorded at the socket: whatever client opened it (the ws package,
// undici's WebSocket, Node's global one, a client of its own), its connection is a net or TLS
// socket whose first write is the upgrade request (record-sockets.mjs hands it over here). From
// then on every write of the agent's is read as client frames (masked) and every chunk the socket
// receives as the 101 response and then server frames; nothing the agent writes or reads changes,
// but for one thing: the upgrade's offer of compression (Sec-WebSocket-Extensions) is taken out,
// so the frames are readable and a replay can answer them without it.
//
// The conversation is cut into turns, each one step of the recording: the open (the upgrade, its
// response, and what the server pushed before the agent's first message), then one per message the
// agent sends (a text, binary or close frame), with what the server sent until the agent's next
// message or its next other call (an HTTP call, a tool, a file step: the turn's step then comes
// before that call's); what the server sends after that is a `push` turn. A turn goes to the
// recorder when the next one starts, when its run goes on to another call, when the connection ends
// and at the process's exit. Pings and pongs the agent's client sends by itself are not turns.
import { frameReader, splitHead } from '../../../sandbox/preload/shared-websocket.mjs';

/** @typedef {import('../protocol.js').MessageOf<'ws'>} WsTurnMessage */
/** @typedef {import('../protocol.js').WireWsFrame} WireWsFrame */

/**
 * @typedef {object} WebSocketContext
 * @property {(run: any, message: WsTurnMessage) => void} send
 * @property {(run: any, bytes: Uint8Array | string) => import('../protocol.js').WireBody | undefined} encode
 * @property {() => number} nowMs
 * @property {(run: any) => WireWsFrame['drawn']} drawn what the run has drawn so far
 * @property {(run: any, url: string) => void} unrecorded a connection followed no further (not frames, a message over the limit)
 * @property {number} pid
 * @property {string} origin what this thread's ids start with
 */

/** Turns whose connection is still open, by run: written at the process's exit. */
const open = new Set();
let seq = 0;

/** The upgrade request without its compression offer, as bytes (latin1 head, the rest unchanged). */
const EXTENSIONS = /\r\nsec-websocket-extensions:[^\r\n]*/gi;

/**
 * Follows one WebSocket connection from its upgrade request (`head`: the first write, which may
 * hold more than the request). Returns the chunk to write in its place (the offer taken out).
 * @param {WebSocketContext} ctx
 * @param {any} socket
 * @param {any} run
 * @param {string} url the WebSocket's URL (ws:// or wss://)
 * @param {any} head the first write's chunk (bytes or a string)
 * @param {BufferEncoding | undefined} encoding
 * @returns {Uint8Array | string}
 */
export function followWebSocket(ctx, socket, run, url, head, encoding) {
  const bytes = typeof head === 'string' ? Buffer.from(head, encoding ?? 'utf8') : Buffer.from(head);
  const split = splitHead(bytes);
  if (split === undefined) return head;
  const cleaned = Buffer.concat([
    Buffer.from(
      `${bytes.subarray(0, bytes.indexOf('\r\n\r\n')).toString('latin1').replace(EXTENSIONS, '')}\r\n\r\n`,
      'latin1',
    ),
    split.rest,
  ]);
  const conn = `${ctx.origin}-ws-${++seq}`;
  const [method = 'GET'] = split.start.split(' ');
  const { 'sec-websocket-extensions': _offer, ...requestHeaders } = split.headers;
  const t0 = ctx.nowMs();
  /** @type {WsTurnMessage} */
  let turn = {
    t: 'ws',
    id: `${conn}-0`,
    conn,
    pid: ctx.pid,
    turn: 0,
    url,
    kind: 'open',
    ts: t0,
    end: t0,
    request: { method, url, headers: requestHeaders },
    received: [],
  };
  let turns = 0;
  let ended = false;
  let responded = false;
  const flush = () => {
    if (turn === undefined) return;
    const done = turn;
    // @ts-expect-error set again by the next turn, if any
    turn = undefined;
    open.delete(entry);
    ctx.send(run, done);
  };
  /** A new turn of the connection's (the agent's message, or the server's push), counted on. */
  const begin = (/** @type {'message' | 'close' | 'push'} */ kind) => {
    const ts = ctx.nowMs();
    turns++;
    open.add(entry);
    return /** @type {WsTurnMessage} */ ({
      t: 'ws',
      id: `${conn}-${turns}`,
      conn,
      pid: ctx.pid,
      turn: turns,
      url,
      kind,
      ts,
      end: ts,
      received: [],
    });
  };
  // Written early when the agent's run goes on to another call (flushWebSockets(run)): the turn's
  // step then comes before that call's, as it happened; not before the upgrade is answered.
  const entry = { run, flush: (/** @type {boolean} */ always) => (always || responded) && flush() };
  open.add(entry);

  /** @param {import('../../../sandbox/preload/shared-websocket.mjs').WsMessage} message */
  const frame = (message) => {
    /** @type {WireWsFrame} */
    const out = { type: message.type, off: Math.max(0, ctx.nowMs() - turn.ts) };
    const body =
      message.type === 'close'
        ? undefined
        : ctx.encode(run, message.type === 'text' ? message.data.toString('utf8') : message.data);
    if (body !== undefined) out.data = body;
    if (message.code !== undefined) out.code = message.code;
    if (message.reason) out.reason = message.reason;
    return out;
  };
  const sent = frameReader(
    (message) => {
      if (ended) return;
      // The client's own answers to the server's pings (and its keep-alive pings) are no turns.
      if (message.type === 'ping' || message.type === 'pong') return;
      flush();
      turn = begin(message.type === 'close' ? 'close' : 'message');
      turn.sent = frame(message);
    },
    () => stop(true),
  );
  /** @type {Buffer} */
  let responseHead = Buffer.alloc(0);
  const received = frameReader(
    (message) => {
      if (ended) return;
      // What the server sends after the agent moved on to another call (its turn was written then).
      if (turn === undefined) turn = begin('push');
      const got = frame(message);
      const drawn = ctx.drawn(run);
      if (drawn !== undefined) got.drawn = drawn;
      turn.received.push(got);
      turn.end = ctx.nowMs();
    },
    () => stop(true),
  );
  /**
   * The connection is followed no further: it ended (its last turn says `closed`), or (`broken`) it
   * carried what is not WebSocket frames or a message over the limit — then what follows is not
   * recorded, and the recording says so (the connection is named as unrecorded).
   */
  const stop = (broken = false) => {
    if (ended) return;
    ended = true;
    if (turn !== undefined) turn.end = ctx.nowMs();
    if (turn !== undefined && !broken) turn.closed = true;
    flush();
    if (broken) ctx.unrecorded(run, url);
    if (socket.write === ownWrite) delete socket.write;
    if (socket.push === ownPush) delete socket.push;
  };

  const { write, push } = socket;
  const ownWrite = function (/** @type {any} */ chunk, /** @type {any} */ enc, /** @type {any} */ callback) {
    try {
      if (!ended && chunk !== undefined && chunk !== null && typeof chunk !== 'function')
        sent.feed(typeof chunk === 'string' ? Buffer.from(chunk, Buffer.isEncoding(enc) ? enc : 'utf8') : chunk);
    } catch {
      stop(true);
    }
    return write.call(this, chunk, enc, callback);
  };
  const ownPush = function (/** @type {any} */ chunk, /** @type {any} */ enc) {
    try {
      if (!ended && chunk === null) stop();
      else if (!ended && chunk !== undefined) {
        const data = typeof chunk === 'string' ? Buffer.from(chunk, enc ?? 'utf8') : Buffer.from(chunk);
        if (responded) received.feed(data);
        else {
          responseHead = Buffer.concat([responseHead, data]);
          const response = splitHead(responseHead);
          if (response !== undefined) {
            responded = true;
            const [, status = '0', ...text] = response.start.split(' ');
            turn.response = { ts: ctx.nowMs(), status: Number(status), headers: response.headers };
            if (text.length > 0) turn.response.statusText = text.join(' ');
            turn.end = turn.response.ts;
            // Refused (no 101): the connection carries HTTP again, not frames.
            if (turn.response.status !== 101) stop();
            else received.feed(response.rest);
          } else if (responseHead.length > 65536) stop(true);
        }
      }
    } catch {
      stop(true);
    }
    return push.call(this, chunk, enc);
  };
  socket.write = ownWrite;
  socket.push = ownPush;
  socket.once('close', () => stop());
  // The rest of the head's chunk (frames written with it) is read as the agent's.
  sent.feed(split.rest);
  return typeof head === 'string' && encoding !== undefined && encoding !== 'latin1' && encoding !== 'binary'
    ? cleaned.toString(encoding)
    : cleaned;
}

/**
 * Writes the turns of connections still open: of one run, as it goes on to another call (what the
 * server sends after that is a `push` turn of its own), or all (the process is exiting).
 * @param {any} [run]
 */
export function flushWebSockets(run) {
  for (const entry of [...open]) if (run === undefined || entry.run === run) entry.flush(run === undefined);
}
