// What the PGlite server knows of each connection and of the one backend they share: who holds
// the backend, whose settings, unnamed statement, temporary objects and advisory locks are on it.
import { createHash } from 'node:crypto';
import type net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import type { TxStatus } from './messages.js';

export interface Conn {
  readonly id: number;
  readonly pid: number;
  readonly key: number;
  readonly socket: net.Socket;
  pending: Buffer;
  started: boolean;
  /** tapedeck's own connection (application_name "tapedeck …"): it waits briefly, and owns no temporary objects. */
  own: boolean;
  queue: Buffer[];
  /** Session settings (GUCs set in the session) to restore when this connection gets the backend. */
  settings: Map<string, string>;
  channels: Set<string>;
  /** Its last Parse of the unnamed statement: parsed again when another connection's replaced it. */
  unnamedParse: Buffer | undefined;
  /** The unnamed statement is to be parsed again before the messages being run. */
  restoreUnnamed: boolean;
  /** Its named statements on the backend (rewritten names): the Parse or PREPARE that made each. */
  statements: Map<string, Buffer | string>;
  /** Another connection's DEALLOCATE ALL or DISCARD ALL removed its statements: made again at its next turn. */
  statementsLost: boolean;
  /** Its cursors declared WITH HOLD (rewritten names). */
  heldCursors: Set<string>;
  /** Inside an extended-protocol cycle (messages since the last Sync). */
  inCycle: boolean;
  inCopy: boolean;
  /** A COPY … FROM STDIN and its data, gathered until CopyDone or CopyFail. */
  copyIn: Buffer[] | undefined;
  status: TxStatus;
  /** A refused extended-protocol cycle: drop messages up to its Sync. */
  skipToSync: boolean;
  timer: NodeJS.Timeout | undefined;
  closed: boolean;
}

export interface ServerState {
  readonly db: PGlite;
  readonly conns: Map<number, Conn>;
  /** How long a connection waits on a holder idle in its transaction; tapedeck's own: `ownWaitMs`. */
  readonly waitMs: number;
  readonly ownWaitMs: number;
  /** The connection the backend is handed to, and since when it holds it with nothing to run. */
  owner: Conn | undefined;
  idleSince: number | undefined;
  readonly waiters: Conn[];
  /** Whose settings the backend's session holds now. */
  sessionOf: Conn | undefined;
  /** The session's holder ran something that may change settings since it got the session. */
  settingsTouched: boolean;
  /** Who parsed the unnamed statement last (0: tapedeck itself). */
  unnamedOwner: number;
  /** The connection whose temporary objects the session holds. */
  tempOwner: Conn | undefined;
  /** The connection whose session-level advisory locks the session may hold. */
  lockOwner: Conn | undefined;
  channelsChanged: boolean;
  /** Work on the backend between two connections' turns (what a closed connection left). */
  readonly chores: Array<() => Promise<void>>;
}

/** Runs wire messages on the backend; its raw output. */
export async function exec(state: ServerState, message: Buffer): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  await state.db.runExclusive(() =>
    state.db.execProtocolRawStream(new Uint8Array(message.buffer, message.byteOffset, message.length), {
      onRawData: (data) => chunks.push(data.slice()),
    }),
  );
  return Buffer.concat(chunks);
}

/** A query of tapedeck's own between turns (it replaces the unnamed statement). */
export function query<T>(state: ServerState, sql: string, params?: unknown[]) {
  state.unnamedOwner = 0;
  return state.db.query<T>(sql, params);
}

/** The prefix of a connection's names on the backend. */
export const prefixOf = (conn: Conn): string => `_td${conn.id}_`;

/** The backend's name for a connection's statement, portal or cursor `name` ('' stays unnamed). */
export function backendName(conn: Conn, name: string): string {
  if (name === '') return '';
  const full = `${prefixOf(conn)}${name}`;
  return Buffer.byteLength(full) <= 63
    ? full
    : `${prefixOf(conn)}${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
}

export function newConn(id: number, key: number, socket: net.Socket): Conn {
  return {
    id,
    pid: 10_000 + id,
    key,
    socket,
    pending: Buffer.alloc(0),
    started: false,
    own: false,
    queue: [],
    settings: new Map(),
    channels: new Set(),
    statements: new Map(),
    statementsLost: false,
    heldCursors: new Set(),
    unnamedParse: undefined,
    restoreUnnamed: false,
    inCycle: false,
    inCopy: false,
    copyIn: undefined,
    status: 'I',
    skipToSync: false,
    timer: undefined,
    closed: false,
  };
}

export const isLive = (conn: Conn | undefined): conn is Conn => conn !== undefined && !conn.closed;
