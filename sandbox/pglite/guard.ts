// What a connection's SQL asks of the session it shares with every other connection: its
// statement and cursor names made its own, what it made noted (to end with it), and what one
// backend cannot give it apart from the others refused in the backend with a coded error.
import { refusedIn, sqlOf, typeOf, withSql } from './messages.js';
import { readSessionUse } from './sql-names.js';
import { backendName, type Conn, isLive, type ServerState } from './state.js';

const COPY_IN_RE = /^\s*copy\b[\s\S]*\bfrom\s+stdin\b/i;
const COPY_ANY_IN_RE = /(?:^|;)\s*copy\b[\s\S]*?\bfrom\s+stdin\b/i;
const SERVER_HINT = 'or a server sandbox (replay --db postgres://…)';

/** A COPY … FROM STDIN the server runs itself: a simple query of its own. */
export const isCopyIn = (message: Buffer, sql: string | undefined): sql is string =>
  typeOf(message) === 'Q' && sql !== undefined && COPY_IN_RE.test(sql);

const shared = (message: Buffer, what: string) =>
  refusedIn(
    message,
    '0A000',
    `tapedeck PGLITE_SHARED_SESSION: the PGlite sandbox has one session for all connections, and ${what}`,
  );

/** The message as the backend is to run it for `conn`: its names made its own, or refused. */
export function admitted(state: ServerState, conn: Conn, message: Buffer): Buffer {
  const sql = sqlOf(message);
  if (sql === undefined) return message;
  if (COPY_ANY_IN_RE.test(sql) && (typeOf(message) === 'P' || !COPY_IN_RE.test(sql))) {
    return refusedIn(
      message,
      '0A000',
      'tapedeck PGLITE_COPY: the PGlite sandbox takes COPY … FROM STDIN only as a simple query of its own (as pg-copy-streams and postgres.js send it), not through the extended protocol or among other statements.',
    );
  }
  const use = readSessionUse(sql, (name) => backendName(conn, name));
  const others = [...state.conns.values()].filter((c) => c !== conn);
  const tempOwner = isLive(state.tempOwner) && state.tempOwner !== conn ? state.tempOwner : undefined;
  const lockOwner = isLive(state.lockOwner) && state.lockOwner !== conn ? state.lockOwner : undefined;
  const holder = others.find((c) => c.heldCursors.size > 0);
  if (use.temp && tempOwner && !conn.own) {
    return shared(
      message,
      `connection ${tempOwner.id} already has temporary objects; temporary objects of two connections would mix. Use ON COMMIT DROP, one connection, ${SERVER_HINT}.`,
    );
  }
  if (use.discard && tempOwner) {
    return shared(
      message,
      `DISCARD would drop the temporary objects of connection ${tempOwner.id}. Use one connection, ${SERVER_HINT}.`,
    );
  }
  if (use.advisory && lockOwner && !conn.own) {
    return refusedIn(
      message,
      '55P03',
      `tapedeck PGLITE_ADVISORY_LOCK: the PGlite sandbox has one session for all connections, and connection ${lockOwner.id} holds session-level advisory locks; to this connection they would look its own. Take them on one connection, ${SERVER_HINT}.`,
    );
  }
  if ((use.closeAll || use.discard === 'all') && holder) {
    return shared(
      message,
      `CLOSE ALL would close the cursors connection ${holder.id} holds. Close them by name, ${SERVER_HINT}.`,
    );
  }
  if (use.discard === 'all' && lockOwner) {
    return shared(
      message,
      `DISCARD ALL would release the advisory locks of connection ${lockOwner.id}. Use one connection, ${SERVER_HINT}.`,
    );
  }
  note(state, conn, use, others);
  return use.sql === sql ? message : withSql(message, use.sql);
}

/** What the connection made and dropped on the backend, to hand back or end with it. */
function note(state: ServerState, conn: Conn, use: ReturnType<typeof readSessionUse>, others: Conn[]): void {
  if (use.temp && !conn.own) state.tempOwner = conn;
  // tapedeck's own (a tracker marking its run alive) are in classes of their own: no agent's.
  if (use.sessionLock && !conn.own) state.lockOwner = conn;
  for (const { name, sql } of use.prepared) conn.statements.set(name, sql);
  for (const name of use.deallocated) conn.statements.delete(name);
  for (const name of use.held) conn.heldCursors.add(name);
  for (const name of use.closed) conn.heldCursors.delete(name);
  if (use.closeAll) conn.heldCursors.clear();
  if (use.deallocateAll || use.discard === 'all') {
    // The backend's statements all go: this connection's for good, the others' made again at their turn.
    conn.statements.clear();
    state.unnamedOwner = 0;
    for (const other of others) if (other.statements.size > 0) other.statementsLost = true;
  }
  if (use.discard === 'all') {
    conn.heldCursors.clear();
    if (conn.channels.size > 0) state.channelsChanged = true;
    conn.channels.clear();
    if (state.lockOwner === conn) state.lockOwner = undefined;
  }
  if (use.discard && state.tempOwner === conn) state.tempOwner = undefined;
}
