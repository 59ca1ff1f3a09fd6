// A Postgres relay on 127.0.0.1: every connection it takes goes to the CURRENT sandbox database,
// whatever database and user the client named. The replay points connections to the recorded
// database's address here (so an agent reaches the sandbox however it names its database), and a
// sandboxed service kept across bisect-prompt probes connects here (so each probe's fresh database
// is reached through one stable URL). It speaks just enough of the protocol to rewrite the
// startup message (database, user) and answer SSL/GSS negotiation with "no"; then it pipes bytes.
import net from 'node:net';
import { CANCEL_REQUEST, GSS_REQUEST, MAX_STARTUP, PROTOCOL_3, SSL_REQUEST } from '../src/postgres/wire.js';

export interface PgTarget {
  host: string;
  port: number;
  database: string;
  user: string;
}

export interface PgRelay {
  readonly host: string;
  readonly port: number;
  /** The URL a client uses to reach the current target through the relay. */
  url(): string;
  /** Points new connections at `target`; open ones are cut (pools reconnect), so none outlives its database. */
  retarget(target: PgTarget | undefined): void;
  close(): Promise<void>;
}

/** The target of a postgres:// URL (database `postgres` and user `postgres` when not named). */
export function pgTargetOf(url: string): PgTarget {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres',
    user: decodeURIComponent(u.username) || 'postgres',
  };
}

function startupWith(params: Map<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of params) parts.push(Buffer.from(`${k}\0${v}\0`, 'utf8'));
  const body = Buffer.concat([...parts, Buffer.from([0])]);
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + body.length, 0);
  head.writeInt32BE(PROTOCOL_3, 4);
  return Buffer.concat([head, body]);
}

function parseStartup(message: Buffer): Map<string, string> {
  const params = new Map<string, string>();
  const fields = message.subarray(8).toString('utf8').split('\0');
  for (let i = 0; i + 1 < fields.length && fields[i] !== ''; i += 2)
    params.set(fields[i] as string, fields[i + 1] as string);
  return params;
}

/** Sends a Postgres ErrorResponse (FATAL) and closes: what the client's driver shows its user. */
function refuse(socket: net.Socket, message: string): void {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C08004\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(4 + fields.length, 1);
  socket.end(Buffer.concat([head, fields]));
}

/**
 * Starts a relay. `onConnect` hears of each client connection (for reports).
 * @example const relay = await startPgRelay(pgTargetOf(db.url)); relay.url() // postgres://postgres@127.0.0.1:41234/postgres
 */
export async function startPgRelay(
  target?: PgTarget,
  options: { onConnect?: (client: { database?: string; user?: string }) => void } = {},
): Promise<PgRelay> {
  let current = target;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => {});
    let pending = Buffer.alloc(0);
    let upstream: net.Socket | undefined;
    const onData = (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      while (!upstream && pending.length >= 8) {
        const length = pending.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP) {
          client.destroy();
          return;
        }
        if (pending.length < length) return;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        const code = message.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          client.write('N');
          continue;
        }
        const to = current;
        if (!to) {
          refuse(client, 'tapedeck: no sandbox database is attached to this relay');
          return;
        }
        let first: Buffer;
        if (code === CANCEL_REQUEST) first = message;
        else if (code === PROTOCOL_3) {
          const params = parseStartup(message);
          options.onConnect?.({ database: params.get('database'), user: params.get('user') });
          params.set('database', to.database);
          params.set('user', to.user);
          first = startupWith(params);
        } else {
          refuse(client, `tapedeck: unsupported Postgres protocol ${code >> 16}.${code & 0xffff}`);
          return;
        }
        client.off('data', onData);
        client.pause();
        const up = net.connect({ host: to.host, port: to.port });
        upstream = up;
        open.add(up);
        up.on('close', () => {
          open.delete(up);
          client.destroy();
        });
        up.on('error', (error) => {
          if (!client.destroyed) refuse(client, `tapedeck: the sandbox database is unreachable: ${error.message}`);
        });
        up.once('connect', () => {
          up.write(first);
          if (pending.length > 0) up.write(pending);
          client.pipe(up);
          up.pipe(client);
          client.resume();
        });
        client.on('close', () => up.destroy());
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    url() {
      const to = current ?? { user: 'postgres', database: 'postgres' };
      return `postgres://${encodeURIComponent(to.user)}@127.0.0.1:${port}/${encodeURIComponent(to.database)}`;
    },
    retarget(next) {
      current = next;
      for (const socket of open) socket.destroy();
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
