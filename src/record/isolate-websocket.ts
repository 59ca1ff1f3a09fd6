// record --isolate's WebSocket door: an upgrade that reaches the recording proxy (a client behind
// HTTP(S)_PROXY — Python, Go, curl — or a Node process, whose connections the preload sends
// through the proxy: record-proxy-door.mjs) is made for real from here and its conversation
// recorded at the upstream socket by the same follower the preload uses (record-websocket.mjs):
// the same `ws` capture messages, so the same websocket.exchange turns and one replay answerer.
// An upgrade to another protocol is refused (the proxy names it as an attempt): nothing passes
// unrecorded.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { wireOf } from '../../sandbox/protocol.js';
import type { PassTarget } from '../../sandbox/proxy/server.js';
import { flushWebSockets, followWebSocket, type WebSocketContext } from './preload/record-websocket.mjs';
import type { CaptureMessage } from './protocol.js';

const nowMs = () => performance.timeOrigin + performance.now();

/** The proxy's `passThrough` for upgrades: a WebSocket's, made and recorded; any other, refused. */
export function webSocketDoor(input: {
  send(message: CaptureMessage): void;
  ca?: string[] | undefined;
}): (target: PassTarget, kind: 'tunnel' | 'upgrade') => Promise<net.Socket | undefined> {
  return async (target, kind) => {
    if (kind !== 'upgrade' || target.protocol !== 'websocket' || target.url === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return undefined;
    }
    const secure = url.protocol === 'https:';
    url.protocol = secure ? 'wss:' : 'ws:';
    const pid = target.pid ?? 0;
    const upstream = secure
      ? tls.connect({
          host: target.host,
          port: target.port,
          // The name the client asked for (SNI), unless it asked for an address.
          ...(net.isIP(target.host) === 0 ? { servername: target.host } : {}),
          ...(input.ca === undefined ? {} : { ca: input.ca }),
          ALPNProtocols: ['http/1.1'],
        })
      : net.connect(target.port, target.host);
    const ctx: WebSocketContext<number> = {
      send: (_run, message) => input.send(message),
      // Whole, as the proxy's HTTP bodies are.
      encode: (_run, bytes) => wireOf(Buffer.from(bytes)),
      nowMs,
      drawn: () => undefined,
      unrecorded: (_run, wsUrl) =>
        input.send({ t: 'socket', pid, ts: nowMs(), kind: 'upgrade', protocol: 'websocket', target: wsUrl }),
      pid,
      origin: `proxy-${pid}`,
    };
    // The proxy's first write is the upgrade request: from there the conversation is followed.
    // (Written past the follower's own write, which reads what follows the head as frames.)
    const socket = upstream as net.Socket & { write: net.Socket['write'] };
    const write = socket.write;
    socket.write = ((chunk: Uint8Array | string, encoding?: BufferEncoding, callback?: () => void) => {
      Reflect.deleteProperty(socket, 'write');
      const head = followWebSocket(ctx, socket, pid, url.href, chunk, encoding);
      return write.call(socket, head, encoding as BufferEncoding, callback);
    }) as net.Socket['write'];
    return upstream;
  };
}

/**
 * Writes the turns of the proxy's conversations: `pid`'s, as that process goes on to another call
 * through the proxy (its turn's step comes first, as it happened), or all (the run is over).
 */
export function flushProxyWebSockets(pid?: number): void {
  flushWebSockets(pid);
}
