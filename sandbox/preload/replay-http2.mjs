// @ts-check
// The replay preload's node:http2 client: every ClientHttp2Session the agent opens (http2.connect,
// and what is built on it: @grpc/grpc-js, Google Cloud SDKs) speaks HTTP/2 with a server inside
// this process over an in-memory stream pair — no socket, no network. Each request stream is
// answered as the other HTTP clients' calls are (the fast index, else the replayer's answer chain),
// with the recorded headers, data (streamed chunk by chunk at the replay's timing) and trailers; a
// recorded failure (RST_STREAM, a refused stream) or a call the chain holds back resets the stream.
// A gRPC client opens its own TCP (and TLS) connection before node:http2 speaks over it: a
// connection to a recorded HTTP/2 address (config.http2) is answered here too, by the same server,
// and never opened (the network guard would refuse it).
import http2 from 'node:http2';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { sameHost } from './network-guard.mjs';
import { monotonicNow } from './shared-clock.mjs';
import { chunkBytesOf, encodeBody, HOP_HEADERS, headerObject } from './shared-wire.mjs';

/** A socket of ours: one end of the pair, the server holding the other. */
const kOurs = Symbol('tapedeck.http2.socket');

/**
 * Two connected in-memory Duplex ends (Node 20 has no stream.duplexPair). The client's end looks
 * like a connected socket of `target` (TLS when `secure`): what http2 and gRPC read off one.
 */
function socketPair(target, secure) {
  /** @type {Duplex} */
  let server;
  /** @type {any} */
  const client = new Duplex({
    read() {},
    write(chunk, _encoding, callback) {
      server.push(chunk);
      callback();
    },
    final(callback) {
      server.push(null);
      callback();
    },
    destroy(error, callback) {
      server.destroy();
      callback(error);
    },
  });
  server = new Duplex({
    read() {},
    write(chunk, _encoding, callback) {
      client.push(chunk);
      callback();
    },
    final(callback) {
      client.push(null);
      callback();
    },
    destroy(error, callback) {
      if (!client.destroyed) client.destroy();
      callback(error);
    },
  });
  Object.assign(client, {
    [kOurs]: true,
    connecting: false,
    remoteAddress: target.host,
    remotePort: target.port,
    remoteFamily: net.isIPv6(target.host) ? 'IPv6' : 'IPv4',
    localAddress: '127.0.0.1',
    localPort: 0,
    encrypted: secure || undefined,
    authorized: secure,
    alpnProtocol: secure ? 'h2' : false,
    setNoDelay: () => client,
    setKeepAlive: () => client,
    setTimeout: () => client,
    ref: () => client,
    unref: () => client,
    address: () => ({ address: '127.0.0.1', family: 'IPv4', port: 0 }),
    getPeerCertificate: () => ({}),
    getProtocol: () => (secure ? 'TLSv1.3' : null),
  });
  return { client, server };
}

/** An RST_STREAM code for a recorded failure: the one its message names (NGHTTP2_REFUSED_STREAM…), else INTERNAL_ERROR. */
function resetCode(error) {
  const name = /NGHTTP2_[A-Z_]+/.exec(String(error?.message ?? ''))?.[0];
  const code = name === undefined ? undefined : /** @type {Record<string, unknown>} */ (http2.constants)[name];
  return typeof code === 'number' ? code : http2.constants.NGHTTP2_INTERNAL_ERROR;
}

/** Headers to send: recorded ones less the wire's own and pseudo-headers; Set-Cookie values apart again. */
function sendable(headers) {
  /** @type {Record<string, string | string[]>} */
  const out = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.startsWith(':') || HOP_HEADERS.has(name.toLowerCase())) continue;
    const values = String(value).split('\n');
    out[name] = values.length === 1 ? String(values[0]) : values;
  }
  return out;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Installs the HTTP/2 client replay. ctx: answer(request, since) -> the reply (from the fast index
 * or the replayer, effects applied, drawn values waited for; `ack: -1` when the replayer is gone),
 * targets: the recorded HTTP/2 addresses, timing: the replay's. Returns undo().
 * @param {{ answer: (request: { method: string, url: string, headers: Record<string, string>, body: import('../protocol.js').WireBody | undefined }, since: number) => Promise<any>, targets: import('../protocol.js').HostPort[], timing: import('../protocol.js').Timing }} ctx
 */
export function installHttp2Replay(ctx) {
  const { answer, targets, timing } = ctx;
  const factor = timing.kind === 'none' ? 0 : timing.kind === 'scaled' ? timing.factor : 1;
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const since = monotonicNow();
    stream.on('error', () => {});
    /** @type {Buffer[]} */
    const parts = [];
    stream.on('data', (chunk) => parts.push(Buffer.from(chunk)));
    stream.once('end', () => {
      void respond(stream, headers, Buffer.concat(parts), since).catch(() => {
        if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      });
    });
  });
  server.on('sessionError', () => {});

  const respond = async (stream, headers, bytes, since) => {
    const url = `${headers[':scheme'] ?? 'http'}://${headers[':authority'] ?? 'localhost'}${headers[':path'] ?? '/'}`;
    const request = {
      method: String(headers[':method'] ?? 'GET'),
      url,
      headers: headerObject(headers),
      body: encodeBody(bytes, -1),
    };
    const reply = await answer(request, since);
    if (stream.destroyed || stream.closed) return;
    if (reply.ack === -1 || reply.error !== undefined) {
      stream.close(resetCode(reply.error));
      return;
    }
    const status = reply.status >= 200 && reply.status <= 599 ? reply.status : 500;
    const trailers = sendable(reply.trailers);
    const hasTrailers = Object.keys(trailers).length > 0;
    /** @type {Buffer[]} */
    const chunks = reply.chunks
      ? reply.chunks.map(chunkBytesOf)
      : reply.body?.b64 !== undefined
        ? [Buffer.from(reply.body.b64, 'base64')]
        : reply.body?.text !== undefined
          ? [Buffer.from(reply.body.text, 'utf8')]
          : [];
    if (hasTrailers) stream.once('wantTrailers', () => stream.sendTrailers(trailers));
    stream.respond(
      { ...sendable(reply.headers), ':status': status },
      { waitForTrailers: hasTrailers, endStream: chunks.length === 0 && !hasTrailers && reply.open !== true },
    );
    if (chunks.length === 0 && !hasTrailers && reply.open !== true) return;
    const start = monotonicNow();
    for (const [i, chunk] of chunks.entries()) {
      const offset = reply.chunks?.[i]?.offsetMs ?? 0;
      const wait = factor > 0 ? start + offset * factor - monotonicNow() : 0;
      if (wait > 0) await sleep(wait);
      if (stream.destroyed) return;
      stream.write(chunk);
    }
    // Recorded as closed by the agent: stays open until the agent closes it again.
    if (reply.open === true && reply.closeAfterStep === undefined) return;
    stream.end();
  };

  /** A client socket of ours: the server takes the other end. */
  const connectPair = (target, secure) => {
    const { client, server: end } = socketPair(target, secure);
    server.emit('connection', end);
    return client;
  };
  const isTarget = (host, port) => targets.some((t) => Number(t.port) === Number(port) && sameHost(t.host, host));
  /** A fake connection's opening events, after the caller has added its listeners. */
  const opened = (socket, events, callback) => {
    if (typeof callback === 'function') socket.once(events[events.length - 1], callback);
    process.nextTick(() => {
      for (const event of events) socket.emit(event);
    });
    return socket;
  };

  const realHttp2Connect = http2.connect;
  /** @type {any} */
  const connect = function connect(
    /** @type {any} */ authority,
    /** @type {any} */ options,
    /** @type {any} */ listener,
  ) {
    if (typeof options === 'function') {
      listener = options;
      options = undefined;
    }
    let url;
    try {
      url = new URL(String(authority));
    } catch {
      return Reflect.apply(realHttp2Connect, this, [
        authority,
        ...(options === undefined ? [] : [options]),
        ...(listener === undefined ? [] : [listener]),
      ]);
    }
    const secure = url.protocol === 'https:';
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port || (secure ? 443 : 80));
    // Whatever socket the agent would bring (a gRPC client's own), the session goes to the server here.
    const createConnection = () => connectPair({ host, port }, secure);
    const args = [authority, { ...(options ?? {}), createConnection }];
    if (typeof listener === 'function') args.push(listener);
    return Reflect.apply(realHttp2Connect, this, args);
  };

  const realNetConnect = net.connect;
  const realCreateConnection = net.createConnection;
  /** net.connect(options | port[, host][, cb]) to a recorded HTTP/2 address: a pair end, "connected". */
  const netConnect = (real) =>
    /** @type {any} */ (
      function connect(/** @type {any[]} */ ...args) {
        const first = args[0];
        const callback = args.find((a) => typeof a === 'function');
        const target =
          first !== null && typeof first === 'object'
            ? { host: String(first.host ?? 'localhost'), port: Number(first.port), path: first.path }
            : { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(first), path: undefined };
        if (target.path !== undefined && target.path !== null) return Reflect.apply(real, this, args);
        if (!isTarget(target.host, target.port)) return Reflect.apply(real, this, args);
        return opened(connectPair(target, false), ['connect', 'ready'], callback);
      }
    );
  const realTlsConnect = tls.connect;
  /** @type {any} */
  const tlsConnect = function connect(/** @type {any[]} */ ...args) {
    const at = args.findIndex((a) => a !== null && typeof a === 'object');
    const options = at === -1 ? {} : args[at];
    const callback = args.find((a) => typeof a === 'function');
    const socket = options.socket;
    if (socket?.[kOurs]) {
      // TLS over a connection of ours: it is already HTTP/2 to the server here.
      Object.assign(socket, { encrypted: true, authorized: true, alpnProtocol: 'h2' });
      return opened(socket, ['secureConnect'], callback);
    }
    const numeric = typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]));
    const host = String((numeric && typeof args[1] === 'string' ? args[1] : options.host) ?? 'localhost');
    const port = Number(numeric ? args[0] : options.port);
    if (socket !== undefined || !isTarget(host, port)) return Reflect.apply(realTlsConnect, this, args);
    return opened(connectPair({ host, port }, true), ['connect', 'secureConnect'], callback);
  };

  // A gRPC client inside the OS sandbox would tunnel through the sandbox's proxy (grpc-js reads
  // https_proxy), which does not speak HTTP/2: the recorded addresses are answered here instead.
  if (targets.length > 0) {
    const given = process.env.no_grpc_proxy ?? process.env.no_proxy;
    process.env.no_grpc_proxy = [given, ...targets.map((t) => t.host)].filter(Boolean).join(',');
  }
  http2.connect = connect;
  const patchedNet = targets.length > 0;
  const ownNetConnect = netConnect(realNetConnect);
  const ownCreateConnection = netConnect(realCreateConnection);
  if (patchedNet) {
    net.connect = ownNetConnect;
    net.createConnection = ownCreateConnection;
    tls.connect = tlsConnect;
  }
  syncBuiltinESMExports();
  return function undo() {
    if (http2.connect === connect) http2.connect = realHttp2Connect;
    if (net.connect === ownNetConnect) net.connect = realNetConnect;
    if (net.createConnection === ownCreateConnection) net.createConnection = realCreateConnection;
    if (tls.connect === tlsConnect) tls.connect = realTlsConnect;
    syncBuiltinESMExports();
  };
}
