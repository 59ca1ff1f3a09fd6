// LISTEN/NOTIFY on one backend: each connection's channels are noted from its SQL, the backend
// listens on their union, and a notification goes to the connections that listen on its channel.
import { wireMessage } from '../../src/postgres/index.js';
import { cstringAt } from './messages.js';
import { type Conn, query, type ServerState } from './state.js';

const LISTEN_RE = /(?:^|;)\s*(un)?listen\s+("(?:[^"]|"")+"|[a-z_][\w$]*|\*)/gi;

function identifier(raw: string): string {
  return raw.startsWith('"') ? raw.slice(1, -1).replaceAll('""', '"') : raw.toLowerCase();
}

/** Notes the channels the connection's SQL listens on or stops listening on. */
export function noteChannels(state: ServerState, conn: Conn, sql: string): void {
  for (const match of sql.matchAll(LISTEN_RE)) {
    const target = match[2] as string;
    if (match[1]) {
      if (target === '*') conn.channels.clear();
      else conn.channels.delete(identifier(target));
    } else if (target !== '*') conn.channels.add(identifier(target));
    state.channelsChanged = true;
  }
}

/** The backend listens on every channel some connection listens on, and on no other. */
export async function reconcileChannels(state: ServerState): Promise<void> {
  state.channelsChanged = false;
  const wanted = new Set<string>();
  for (const conn of state.conns.values()) for (const channel of conn.channels) wanted.add(channel);
  const { rows: listening } = await query<{ c: string }>(state, 'SELECT pg_listening_channels() AS c');
  const has = new Set(listening.map((r) => r.c));
  const quote = (c: string) => `"${c.replaceAll('"', '""')}"`;
  const statements = [
    ...[...wanted].filter((c) => !has.has(c)).map((c) => `LISTEN ${quote(c)}`),
    ...[...has].filter((c) => !wanted.has(c)).map((c) => `UNLISTEN ${quote(c)}`),
  ];
  if (statements.length > 0) await state.db.exec(statements.join(';'));
}

/** A NotificationResponse ('A') from the backend, sent to the connections that listen on its channel. */
export function routeNotification(
  state: ServerState,
  sender: Conn,
  message: Buffer,
  send: (conn: Conn, data: Buffer) => void,
): void {
  const body = Buffer.from(message.subarray(5));
  // The notifying process, as listeners see it: the sending connection's process id.
  body.writeInt32BE(sender.pid, 0);
  const [channel] = cstringAt(body, 4);
  const notification = wireMessage('A', body);
  for (const other of state.conns.values()) if (other.channels.has(channel)) send(other, notification);
}
