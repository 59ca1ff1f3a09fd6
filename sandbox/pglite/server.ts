// One PGlite served to many wire-protocol connections. PGlite is a single backend with a single
// session, and a connection pool (or the replayer beside an agent) opens several connections; so
// the backend is taken in turns (lease.ts), and what a session holds is kept per connection as
// far as one backend allows: statement, portal and cursor names (names.ts, sql-names.ts), SET
// settings and advisory-lock holders (session.ts), LISTEN channels (notify.ts); a transaction,
// COPY, statements, held cursors, temporary objects and advisory locks a connection leaves end
// with it. What cannot be kept apart is refused in the backend with a coded error (guard.ts).
import { randomInt } from 'node:crypto';
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import {
  CANCEL_REQUEST,
  cstrings,
  errorResponse,
  GSS_REQUEST,
  listenOnLoopback,
  MAX_STARTUP,
  PROTOCOL_3,
  parseParams,
  SSL_REQUEST,
  wireMessage,
} from '../../src/postgres/index.js';
import { startCopyIn } from './copy.js';
import { admitted, isCopyIn } from './guard.js';
import { createLease } from './lease.js';
import { messagesOf, readyFor, sqlOf, type TxStatus, typeOf } from './messages.js';
import { asWritten, renamed } from './names.js';
import { noteChannels, routeNotification } from './notify.js';
import { maySetSettings, REPORTED, reportedSettings, startupSettings } from './session.js';
import { type Conn, exec, isLive, newConn, type ServerState } from './state.js';

export interface PgliteServerOptions {
  /** How many simultaneous client connections are accepted. */
  maxConnections?: number;
  /** How long a connection waits while another holds the backend idle (in a transaction) before its query fails. */
  waitMs?: number;
  /** The same for tapedeck's own connections (application_name "tapedeck …"), which apply a tool call's recorded changes. */
  ownWaitMs?: number;
}

export interface PgliteServer {
  readonly host: string;
  readonly port: number;
  /**
   * Settings each connection opened from now on starts with, unless it names them itself (the
   * recorded database's search_path: what a server sets for a database or role, which the one
   * backend, started long before, cannot take).
   */
  startWith(settings: ReadonlyMap<string, string>): void;
  close(): Promise<void>;
}

const DEFAULT_WAIT_MS = 15_000;
const DEFAULT_OWN_WAIT_MS = 1_000;
/** Messages that end a unit of work the backend answers with ReadyForQuery (or end a COPY). */
const UNIT_END = new Set(['S', 'Q', 'F', 'c', 'f']);
/** What a connection left on the backend that is its own: temporary relations and routines, not tapedeck's (tapedeck_*). */
const DROP_TEMP = `DO $tapedeck$DECLARE r record; BEGIN
  FOR r IN SELECT c.oid::regclass::text AS name, CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
      WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind
    FROM pg_class c WHERE c.relnamespace = pg_my_temp_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      AND c.relname NOT LIKE 'tapedeck\\_%'
  LOOP EXECUTE format('DROP %s IF EXISTS %s CASCADE', r.kind, r.name); END LOOP;
  FOR r IN SELECT p.oid::regprocedure::text AS name FROM pg_proc p
    WHERE p.pronamespace = pg_my_temp_schema() AND p.proname NOT LIKE 'tapedeck\\_%'
  LOOP EXECUTE format('DROP ROUTINE IF EXISTS %s CASCADE', r.name); END LOOP;
END$tapedeck$`;
/** tapedeck's own clients name themselves so (src/postgres/connect.ts). */
const OWN_APPLICATION = /^tapedeck /;

/**
 * Serves `db` on 127.0.0.1 (an ephemeral port) to any number of connections, each seeing a
 * session of its own as far as one backend allows.
 * @example const server = await servePglite(db); // postgres://postgres@127.0.0.1:${server.port}/postgres
 */
export async function servePglite(db: PGlite, options: PgliteServerOptions = {}): Promise<PgliteServer> {
  const maxConnections = options.maxConnections ?? 32;
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const state: ServerState = {
    db,
    conns: new Map(),
    waitMs,
    ownWaitMs: Math.min(waitMs, options.ownWaitMs ?? DEFAULT_OWN_WAIT_MS),
    owner: undefined,
    idleSince: undefined,
    waiters: [],
    sessionOf: undefined,
    settingsTouched: false,
    unnamedOwner: 0,
    tempOwner: undefined,
    lockOwner: undefined,
    channelsChanged: false,
    chores: [],
  };
  const { conns } = state;
  let nextId = 1;
  const reported = await reportedSettings(db);
  let defaults: ReadonlyMap<string, string> = new Map();

  const send = (conn: Conn, data: Buffer) => {
    if (!conn.closed && data.length > 0 && conn.socket.writable) conn.socket.write(data);
  };

  /** Routes the backend's answer: notifications to who listens, the rest to the connection that asked. */
  const deliver = (conn: Conn, output: Buffer, copied = false) => {
    const kept: Buffer[] = [];
    for (const message of messagesOf(output)) {
      const type = typeOf(message);
      if (type === 'Z') {
        conn.status = String.fromCharCode(message[5] as number) as TxStatus;
        conn.inCopy = false;
      } else if (type === 'G' && copied)
        continue; // Its CopyInResponse went out before the data was gathered.
      else if (type === 'G') conn.inCopy = true;
      else if (type === 'A') {
        routeNotification(state, conn, message, send);
        continue;
      } else if (type === 'E' || type === 'N') {
        kept.push(asWritten(conn, message));
        continue;
      }
      kept.push(message);
    }
    send(conn, Buffer.concat(kept));
  };

  const runOwner = async (conn: Conn) => {
    let batch: Buffer[] = [];
    let copied = false;
    while (conn.queue.length > 0) {
      const message = conn.queue[0] as Buffer;
      const type = typeOf(message);
      if (conn.copyIn) {
        conn.queue.shift();
        conn.copyIn.push(message);
        if (type === 'c' || type === 'f') {
          batch = conn.copyIn;
          conn.copyIn = undefined;
          copied = true;
          break;
        }
        continue;
      }
      if (type === 'X') {
        if (batch.length > 0) break;
        conn.queue.shift();
        conn.socket.end();
        await closeConn(conn);
        return;
      }
      const sql = sqlOf(message);
      if (isCopyIn(message, sql)) {
        if (batch.length > 0) break;
        conn.queue.shift();
        const failed = await startCopyIn(state, conn, admitted(state, conn, message), send);
        if (failed) deliver(conn, failed);
        return;
      }
      conn.queue.shift();
      if (sql !== undefined) {
        noteChannels(state, conn, sql);
        if (maySetSettings(sql)) state.settingsTouched = true;
      }
      batch.push(renamed(state, conn, admitted(state, conn, message)));
      if ('PBDEHC'.includes(type)) conn.inCycle = true;
      if (type === 'S') conn.inCycle = false;
      if (UNIT_END.has(type)) break;
    }
    if (batch.length === 0) return;
    if (conn.restoreUnnamed && conn.unnamedParse) {
      conn.restoreUnnamed = false;
      // Its ParseComplete was answered long ago; only a failure (its table dropped since) is news.
      const again = messagesOf(await exec(state, conn.unnamedParse)).filter((m) => typeOf(m) === 'E');
      send(conn, Buffer.concat(again));
    }
    deliver(conn, await exec(state, Buffer.concat(batch)), copied);
  };

  const lease = createLease(state, {
    runOwner,
    send,
    terminate(conn) {
      conn.socket.end();
      void closeConn(conn);
    },
  });

  const closeConn = async (conn: Conn) => {
    if (conn.closed) return;
    conn.closed = true;
    conns.delete(conn.id);
    lease.forget(conn);
    const hadChannels = conn.channels.size > 0;
    const names = { S: [...conn.statements.keys()], P: [...conn.heldCursors] };
    const hadTemp = state.tempOwner === conn;
    if (hadTemp) state.tempOwner = undefined;
    const hadLocks = state.lockOwner === conn;
    if (state.sessionOf === conn) state.sessionOf = undefined;
    // What the connection left open on the backend ends with it, as a server ends a backend.
    state.chores.push(async () => {
      if (conn.inCycle) await exec(state, wireMessage('S'));
      if (db.isInTransaction()) await exec(state, wireMessage('Q', cstrings('ROLLBACK')));
      const closes = Object.entries(names).flatMap(([kind, list]) =>
        list.map((name) => wireMessage('C', Buffer.concat([Buffer.from(kind), cstrings(name)]))),
      );
      if (closes.length > 0) await exec(state, Buffer.concat([...closes, wireMessage('S')]));
      if (hadTemp) await db.exec(DROP_TEMP);
      if (hadLocks && state.lockOwner === conn) {
        await exec(state, wireMessage('Q', cstrings('SELECT pg_advisory_unlock_all()')));
        state.lockOwner = undefined;
      }
      if (hadChannels) state.channelsChanged = true;
    });
    if (state.owner === conn) state.owner = undefined;
    lease.pump();
  };

  const startup = (conn: Conn, message: Buffer) => {
    const params = parseParams(message.subarray(8)) ?? new Map<string, string>();
    conn.settings = new Map([...defaults, ...startupSettings(params, reported)]);
    conn.own = OWN_APPLICATION.test(params.get('application_name') ?? '');
    const status = REPORTED.map((name) => {
      const value = [...conn.settings].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? reported.get(name);
      return value === undefined ? Buffer.alloc(0) : wireMessage('S', cstrings(name, value));
    });
    const keyData = Buffer.alloc(8);
    keyData.writeInt32BE(conn.pid, 0);
    keyData.writeInt32BE(conn.key, 4);
    send(conn, Buffer.concat([wireMessage('R', Buffer.alloc(4)), ...status, wireMessage('K', keyData), readyFor('I')]));
    conn.started = true;
  };

  const onCancel = (message: Buffer) => {
    const pid = message.readInt32BE(8);
    const key = message.readInt32BE(12);
    const target = [...conns.values()].find((c) => c.pid === pid && c.key === key);
    // A query still waiting for the backend can be cancelled; one running in PGlite runs to its end.
    if (target && lease.isWaiting(target))
      lease.refuseQueued(target, '57014', 'canceling statement due to user request');
  };

  const refuse = (conn: Conn, code: string, message: string) => {
    send(conn, errorResponse(code, message));
    conn.socket.end();
    void closeConn(conn);
  };

  const onData = (conn: Conn, data: Buffer) => {
    conn.pending = conn.pending.length === 0 ? data : Buffer.concat([conn.pending, data]);
    while (isLive(conn)) {
      if (!conn.started) {
        if (conn.pending.length < 8) return;
        const length = conn.pending.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP) return refuse(conn, '08P01', 'invalid startup packet');
        if (conn.pending.length < length) return;
        const message = conn.pending.subarray(0, length);
        conn.pending = conn.pending.subarray(length);
        const code = message.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSS_REQUEST) send(conn, Buffer.from('N'));
        else if (code === CANCEL_REQUEST) {
          if (length === 16) onCancel(message);
          conn.socket.end();
          return;
        } else if (code === PROTOCOL_3) startup(conn, message);
        else return refuse(conn, '08P01', 'unsupported frontend protocol');
        continue;
      }
      if (conn.pending.length < 5) return;
      const length = conn.pending.readInt32BE(1);
      if (length < 4) return refuse(conn, '08P01', 'invalid message length');
      if (conn.pending.length < length + 1) return;
      const message = conn.pending.subarray(0, length + 1);
      conn.pending = conn.pending.subarray(length + 1);
      lease.enqueue(conn, message);
    }
  };

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => {});
    if (conns.size >= maxConnections) {
      socket.end(errorResponse('53300', 'sorry, too many clients already'));
      return;
    }
    const conn = newConn(nextId++, randomInt(2 ** 31), socket);
    conns.set(conn.id, conn);
    socket.on('data', (data) => onData(conn, data));
    socket.on('close', () => void closeConn(conn));
  });
  const port = await listenOnLoopback(server);
  return {
    host: '127.0.0.1',
    port,
    startWith(settings) {
      defaults = new Map(settings);
    },
    async close() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const conn of conns.values()) conn.socket.destroy();
      await closing;
    },
  };
}
