// A Postgres wire-protocol gate: a local port that lets through exactly one database and one
// role. Postgres lets any role connect to any database whose CONNECT privilege PUBLIC holds (the
// default), and tapedeck must not change databases it did not create; so the agent of a replay
// is handed this gate's address instead of the server's. The gate reads the client's startup
// message, refuses anything but the sandbox database as the sandbox role (and replication or
// cancel requests), and then only relays bytes: authentication stays between client and server.
import net from 'node:net';
import {
  CANCEL_REQUEST,
  errorResponse,
  GSS_REQUEST,
  listenOnLoopback,
  MAX_STARTUP,
  PROTOCOL_3,
  parseParams,
  SSL_REQUEST,
} from './wire.js';

export interface DbGate {
  readonly host: string;
  readonly port: number;
  /** How many connections were refused (for tests and the replay's report). */
  readonly refused: number;
  close(): Promise<void>;
}

export type Upstream = { host: string; port: number } | { path: string };

export interface GateOptions {
  upstream: Upstream;
  database: string;
  user: string;
}

const STARTUP_TIMEOUT_MS = 30_000;

/**
 * Opens the gate on 127.0.0.1 (an ephemeral port) in front of `upstream`.
 * @example const gate = await openGate({ upstream: { host: '127.0.0.1', port: 5432 }, database: 'tapedeck_sbx_1a2b3c4d', user: 'tapedeck_sbx_1a2b3c4d' });
 */
export async function openGate(options: GateOptions): Promise<DbGate> {
  const sockets = new Set<net.Socket>();
  let refused = 0;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    client.setTimeout(STARTUP_TIMEOUT_MS, () => client.destroy());
    let pending = Buffer.alloc(0);
    const refuse = (code: string, message: string) => {
      refused++;
      client.removeAllListeners('data');
      client.end(errorResponse(code, message));
    };
    const onData = (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP) return refuse('08P01', 'invalid startup packet');
        if (pending.length < length) return;
        const code = pending.readInt32BE(4);
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          // No encryption on the loopback hop; the client continues in plain text or gives up.
          client.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST) return refuse('08P01', 'cancel requests are not relayed by the tapedeck sandbox');
        if (code !== PROTOCOL_3) return refuse('08P01', 'unsupported frontend protocol');
        const params = parseParams(message.subarray(8));
        if (!params) return refuse('08P01', 'invalid startup packet');
        const user = params.get('user');
        const database = params.get('database') || user;
        const replication = params.get('replication');
        if (replication !== undefined && !/^(false|off|no|0)$/i.test(replication)) {
          return refuse('28000', 'replication connections are not allowed into the tapedeck sandbox');
        }
        if (user !== options.user || database !== options.database) {
          return refuse(
            '28000',
            `the tapedeck sandbox allows only database "${options.database}" as role "${options.user}"`,
          );
        }
        client.removeListener('data', onData);
        client.pause();
        client.setTimeout(0);
        const upstream =
          'path' in options.upstream
            ? net.connect({ path: options.upstream.path })
            : net.connect({ host: options.upstream.host, port: options.upstream.port });
        sockets.add(upstream);
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        upstream.once('connect', () => {
          upstream.write(message);
          if (pending.length > 0) upstream.write(pending);
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
        return;
      }
    };
    client.on('data', onData);
  });
  const port = await listenOnLoopback(server);
  return {
    host: '127.0.0.1',
    port,
    get refused() {
      return refused;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
