// One PGlite served to many wire-protocol connections. PGlite is a single backend with a single
// session, and a connection pool (or the replayer beside an agent) opens several connections; so
// this server hands the backend to one connection at a time, for as long as the protocol needs it
// to be that connection's: a whole transaction (ReadyForQuery 'T' or 'E' keeps it, 'I' releases
// it), a whole extended-protocol cycle up to Sync, a COPY. The others wait, bounded: a connection
// that waits while the holder sits idle inside its transaction gets a clear error instead of a
// hang (a program that waits on connection B inside connection A's transaction needs a server).
//
// What is each connection's own, as on a server: its prepared statements and portals (names are
// rewritten per connection, and the unnamed statement of another connection is never bound), its
// SET settings (saved and restored when the backend changes hands), its LISTEN channels
// (notifications are routed to the connections that listen), a transaction or COPY cut off by a
// disconnect (rolled back). What cannot be: temporary tables of two connections at once (a clear
// error), SQL-level PREPARE names and session advisory locks (shared; docs/replay.md says so).
import { createHash, randomInt } from 'node:crypto';
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
} from '../src/postgres/index.js';

export interface PgliteServerOptions {
  /** How many simultaneous client connections are accepted. */
  maxConnections?: number;
  /** How long a connection waits while another holds the backend idle (in a transaction) before its query fails. */
  waitMs?: number;
}

export interface PgliteServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

type TxStatus = 'I' | 'T' | 'E';

interface Conn {
  readonly id: number;
  readonly pid: number;
  readonly key: number;
  readonly socket: net.Socket;
  pending: Buffer;
  started: boolean;
  queue: Buffer[];
  /** Session settings (GUCs set in the session) to restore when this connection gets the backend. */
  settings: Map<string, string>;
  channels: Set<string>;
  /** Its last Parse of the unnamed statement: parsed again when another connection's replaced it. */
  unnamedParse: Buffer | undefined;
  /** The unnamed statement is to be parsed again before the messages being run. */
  restoreUnnamed: boolean;
  /** This connection's named statements on the backend (rewritten names). */
  statements: Set<string>;
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

const DEFAULT_WAIT_MS = 15_000;
/** The GUCs a server reports in ParameterStatus at startup. */
const REPORTED = [
  'server_version',
  'server_encoding',
  'client_encoding',
  'application_name',
  'default_transaction_read_only',
  'in_hot_standby',
  'is_superuser',
  'session_authorization',
  'DateStyle',
  'IntervalStyle',
  'TimeZone',
  'integer_datetimes',
  'standard_conforming_strings',
];
/** Startup parameters that are not settings. */
const NOT_SETTINGS = new Set(['user', 'database', 'replication', 'options']);
/** Messages that end a unit of work the backend answers with ReadyForQuery (or end a COPY). */
const UNIT_END = new Set(['S', 'Q', 'F', 'c', 'f']);
const LISTEN_RE = /(?:^|;)\s*(un)?listen\s+("(?:[^"]|"")+"|[a-z_][\w$]*|\*)/gi;
const TEMP_RE = /(?:^|;)\s*create\s+(?:(?:global|local)\s+)?temp(?:orary)?\s+(?:table|view|sequence)\b/i;
const COPY_IN_RE = /^\s*copy\b[\s\S]*\bfrom\s+stdin\b/i;
const COPY_ANY_IN_RE = /(?:^|;)\s*copy\b[\s\S]*?\bfrom\s+stdin\b/i;
/**
 * SQL that may change session settings: SET, RESET, DISCARD, set_config(), a SET run by EXECUTE
 * in a DO block (any "set name =|to", so an UPDATE's SET too: one read more, never one less).
 */
const SETTING_RE = /(?:^|;)\s*(?:set|reset|discard)\b|\bset_config\s*\(|\bset\s+(?:session\s+)?[\w."]+\s*(?:=|\bto\b)/i;
const PROBE = '_tapedeck_copy_probe';
const COMMIT_DROP_RE = /\bon\s+commit\s+drop\b/i;

/** The messages of a backend's output. */
function messagesOf(output: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  for (let at = 0; at + 5 <= output.length; ) {
    const end = at + 1 + output.readInt32BE(at + 1);
    messages.push(output.subarray(at, end));
    at = end;
  }
  return messages;
}

/** A cstring at `at`: its text and the offset after its terminator. */
function cstringAt(body: Buffer, at: number): [string, number] {
  const end = body.indexOf(0, at);
  const stop = end < 0 ? body.length : end;
  return [body.toString('utf8', at, stop), stop + 1];
}

function identifier(raw: string): string {
  return raw.startsWith('"') ? raw.slice(1, -1).replaceAll('""', '"') : raw.toLowerCase();
}

/** The SQL text of a Query or Parse message, else undefined. */
function sqlOf(message: Buffer): string | undefined {
  const type = String.fromCharCode(message[0] as number);
  if (type === 'Q') return cstringAt(message, 5)[0];
  if (type === 'P') return cstringAt(message, cstringAt(message, 5)[1])[0];
  return undefined;
}

/** A statement that fails with `message` in the backend itself, so every protocol state (transaction, extended cycle) moves as for any error. */
function failingSql(code: string, message: string): string {
  return `DO $tapedeck$BEGIN RAISE EXCEPTION USING ERRCODE = '${code}', MESSAGE = ${`'${message.replaceAll("'", "''")}'`}; END$tapedeck$`;
}

function withSql(message: Buffer, sql: string): Buffer {
  const type = String.fromCharCode(message[0] as number);
  if (type === 'Q') return wireMessage('Q', cstrings(sql));
  const [name, afterName] = cstringAt(message, 5);
  const [, afterSql] = cstringAt(message, afterName);
  return wireMessage('P', Buffer.concat([cstrings(name, sql), message.subarray(afterSql)]));
}

/**
 * Serves `db` on 127.0.0.1 (an ephemeral port) to any number of connections, each seeing a
 * session of its own as far as one backend allows.
 * @example const server = await servePglite(db); // postgres://postgres@127.0.0.1:${server.port}/postgres
 */
export async function servePglite(db: PGlite, options: PgliteServerOptions = {}): Promise<PgliteServer> {
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const maxConnections = options.maxConnections ?? 32;
  const conns = new Map<number, Conn>();
  let nextId = 1;
  /** The connection the backend is handed to, and since when it holds it with nothing to run. */
  let owner: Conn | undefined;
  let idleSince: number | undefined;
  const waiters: Conn[] = [];
  /** Whose settings the backend's session holds now. */
  let sessionOf: Conn | undefined;
  /** The session's holder ran something that may change settings since it got the session. */
  let settingsTouched = false;
  /** Who parsed the unnamed statement last (0: tapedeck itself). */
  let unnamedOwner = 0;
  let tempOwner: Conn | undefined;
  let channelsChanged = false;
  const chores: Array<() => Promise<void>> = [];
  let pumping = false;

  const reported = new Map<string, string>();
  const { rows } = await db.query<{ n: string; v: string | null }>(
    'SELECT n, current_setting(n, true) AS v FROM unnest($1::text[]) AS n',
    [REPORTED],
  );
  for (const row of rows) if (row.v !== null) reported.set(row.n, row.v);

  const exec = async (message: Buffer): Promise<Buffer> => {
    const chunks: Uint8Array[] = [];
    await db.runExclusive(() =>
      db.execProtocolRawStream(new Uint8Array(message.buffer, message.byteOffset, message.length), {
        onRawData: (data) => chunks.push(data.slice()),
      }),
    );
    return Buffer.concat(chunks);
  };

  const mapped = (conn: Conn, name: string): string => {
    if (name === '') return '';
    const full = `_td${conn.id}_${name}`;
    return Buffer.byteLength(full) <= 63
      ? full
      : `_td${conn.id}_${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;
  };

  /**
   * The unnamed statement as this connection knows it: its own, parsed again when another
   * connection (or a hand-over) replaced it on the backend; never another connection's.
   */
  const unnamedFor = (conn: Conn): string => {
    if (unnamedOwner === conn.id) return '';
    if (!conn.unnamedParse) return '_td_no_unnamed_statement';
    conn.restoreUnnamed = true;
    unnamedOwner = conn.id;
    return '';
  };

  /** A client's extended-protocol message with its statement and portal names made its own. */
  const rewrite = (conn: Conn, message: Buffer): Buffer => {
    const type = String.fromCharCode(message[0] as number);
    switch (type) {
      case 'P': {
        const [name, next] = cstringAt(message, 5);
        if (name === '') {
          unnamedOwner = conn.id;
          conn.unnamedParse = message;
        } else conn.statements.add(mapped(conn, name));
        return wireMessage('P', Buffer.concat([cstrings(mapped(conn, name)), message.subarray(next)]));
      }
      case 'B': {
        const [portal, next] = cstringAt(message, 5);
        const [statement, rest] = cstringAt(message, next);
        const target = statement === '' ? unnamedFor(conn) : mapped(conn, statement);
        return wireMessage('B', Buffer.concat([cstrings(mapped(conn, portal), target), message.subarray(rest)]));
      }
      case 'D':
      case 'C': {
        const kind = String.fromCharCode(message[5] as number);
        const [name] = cstringAt(message, 6);
        if (type === 'C' && kind === 'S') conn.statements.delete(mapped(conn, name));
        const target = kind === 'S' && name === '' ? unnamedFor(conn) : mapped(conn, name);
        return wireMessage(type, Buffer.concat([Buffer.from(kind, 'latin1'), cstrings(target)]));
      }
      case 'E': {
        const [portal, next] = cstringAt(message, 5);
        return wireMessage('E', Buffer.concat([cstrings(mapped(conn, portal)), message.subarray(next)]));
      }
      default:
        return message;
    }
  };

  /** What the connection's SQL asks that one backend cannot give it apart from others: refused in the backend. */
  const guard = (conn: Conn, message: Buffer): Buffer => {
    const sql = sqlOf(message);
    if (sql === undefined) return message;
    if (COPY_ANY_IN_RE.test(sql) && (message[0] === 'P'.charCodeAt(0) || !COPY_IN_RE.test(sql))) {
      return withSql(
        message,
        failingSql(
          '0A000',
          'tapedeck PGLITE_COPY: the PGlite sandbox takes COPY … FROM STDIN only as a simple query of its own (as pg-copy-streams and postgres.js send it), not through the extended protocol or among other statements.',
        ),
      );
    }
    if (TEMP_RE.test(sql) && !COMMIT_DROP_RE.test(sql)) {
      if (tempOwner && tempOwner !== conn && !tempOwner.closed) {
        return withSql(
          message,
          failingSql(
            '0A000',
            `tapedeck PGLITE_SHARED_SESSION: the PGlite sandbox has one session for all connections, and connection ${tempOwner.id} already has temporary tables; temporary tables of two connections would mix. Use ON COMMIT DROP, one connection, or a server sandbox (replay --db postgres://…).`,
          ),
        );
      }
      tempOwner = conn;
    }
    return message;
  };

  const noteChannels = (conn: Conn, sql: string) => {
    for (const match of sql.matchAll(LISTEN_RE)) {
      const target = match[2] as string;
      if (match[1]) {
        if (target === '*') conn.channels.clear();
        else conn.channels.delete(identifier(target));
      } else if (target !== '*') conn.channels.add(identifier(target));
      channelsChanged = true;
    }
  };

  const send = (conn: Conn, data: Buffer) => {
    if (!conn.closed && data.length > 0 && conn.socket.writable) conn.socket.write(data);
  };

  /** Routes the backend's answer: notifications to who listens, the rest to the connection that asked. */
  const deliver = (conn: Conn, output: Buffer, copied = false) => {
    let at = 0;
    let keptFrom = 0;
    const kept: Buffer[] = [];
    while (at + 5 <= output.length) {
      const type = String.fromCharCode(output[at] as number);
      const end = at + 1 + output.readInt32BE(at + 1);
      if (type === 'Z') conn.status = String.fromCharCode(output[at + 5] as number) as TxStatus;
      else if (type === 'G' && copied) {
        // Its CopyInResponse went out before the data was gathered.
        kept.push(output.subarray(keptFrom, at));
        keptFrom = end;
      } else if (type === 'G') conn.inCopy = true;
      else if (type === 'A') {
        const body = Buffer.from(output.subarray(at + 5, end));
        body.writeInt32BE(conn.pid, 0);
        const [channel] = cstringAt(body, 4);
        const notification = wireMessage('A', body);
        kept.push(output.subarray(keptFrom, at));
        keptFrom = end;
        for (const other of conns.values()) if (other.channels.has(channel)) send(other, notification);
      }
      if (type === 'Z') conn.inCopy = false;
      at = end;
    }
    kept.push(output.subarray(keptFrom));
    send(conn, kept.length === 1 ? output : Buffer.concat(kept));
  };

  /**
   * A COPY … FROM STDIN: PGlite reads its data from the same call (and stops for good on running
   * out), so the data is gathered first. Whether the COPY starts at all (its table, its columns)
   * is asked of the backend by starting it and failing it at once, inside a savepoint when in a
   * transaction: its CopyInResponse goes to the client, or, when it does not start, the COPY runs
   * for real and fails as it would have (it reads nothing before failing).
   */
  const startCopyIn = async (conn: Conn, message: Buffer) => {
    if (conn.status === 'E') return deliver(conn, await exec(message));
    const inTransaction = conn.status === 'T';
    const probe = await exec(
      Buffer.concat([
        ...(inTransaction ? [wireMessage('Q', cstrings(`SAVEPOINT ${PROBE}`))] : []),
        message,
        wireMessage('f', cstrings('tapedeck: probe')),
        ...(inTransaction
          ? [wireMessage('Q', cstrings(`ROLLBACK TO SAVEPOINT ${PROBE}; RELEASE SAVEPOINT ${PROBE}`))]
          : []),
      ]),
    );
    const copyIn = messagesOf(probe).find((m) => m[0] === 'G'.charCodeAt(0));
    if (!copyIn) return deliver(conn, await exec(message));
    conn.copyIn = [message];
    conn.inCopy = true;
    send(conn, copyIn);
  };

  /** Runs the owner's next messages, up to the end of one unit of work. */
  const runOwner = async (conn: Conn) => {
    let batch: Buffer[] = [];
    let copied = false;
    while (conn.queue.length > 0) {
      const message = conn.queue[0] as Buffer;
      const type = String.fromCharCode(message[0] as number);
      if (conn.copyIn) {
        // PGlite reads a COPY's data from the same call as the COPY (it stops for good on running out):
        // the data is gathered to its end, then the whole runs at once.
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
      if (type === 'Q' && sql !== undefined && COPY_IN_RE.test(sql)) {
        if (batch.length > 0) break;
        conn.queue.shift();
        await startCopyIn(conn, message);
        return;
      }
      conn.queue.shift();
      if (sql !== undefined) {
        noteChannels(conn, sql);
        if (SETTING_RE.test(sql)) settingsTouched = true;
      }
      batch.push(rewrite(conn, guard(conn, message)));
      if ('PBDEHC'.includes(type)) conn.inCycle = true;
      if (type === 'S') conn.inCycle = false;
      if (UNIT_END.has(type)) break;
    }
    if (batch.length === 0) return;
    if (conn.restoreUnnamed && conn.unnamedParse) {
      conn.restoreUnnamed = false;
      // Its ParseComplete was answered long ago; only a failure (its table dropped since) is news.
      const again = messagesOf(await exec(conn.unnamedParse)).filter((m) => m[0] === 'E'.charCodeAt(0));
      send(conn, Buffer.concat(again));
    }
    deliver(conn, await exec(Buffer.concat(batch)), copied);
  };

  const holds = (conn: Conn) => conn.status !== 'I' || conn.inCycle || conn.inCopy;

  /** Reads the session's settings (what SET changed), to hand them back later. */
  const sessionSettings = async (): Promise<Map<string, string>> => {
    unnamedOwner = 0;
    const result = await db.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE source = 'session' ORDER BY name",
    );
    return new Map(result.rows.map((r) => [r.name, r.setting]));
  };

  const sameSettings = (a: Map<string, string>, b: Map<string, string>) =>
    a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

  /** Gives the backend's session to `conn`: the previous holder's settings saved, this one's restored. */
  const handTo = async (conn: Conn) => {
    if (sessionOf === conn) return;
    // Read back only when the holder may have changed them (or left): a hand-over per query of
    // a pool costs no query then.
    let current: Map<string, string>;
    if (sessionOf && !sessionOf.closed && !settingsTouched) current = sessionOf.settings;
    else {
      current = await sessionSettings();
      if (sessionOf && !sessionOf.closed) sessionOf.settings = current;
    }
    settingsTouched = false;
    if (!sameSettings(current, conn.settings)) {
      await db.exec('RESET ALL');
      const names = [...conn.settings.keys()];
      const values = [...conn.settings.values()];
      try {
        await db.query('SELECT set_config(n, v, false) FROM unnest($1::text[], $2::text[]) AS s(n, v)', [
          names,
          values,
        ]);
      } catch {
        // One setting the backend refuses (an unknown startup parameter) does not cost the others.
        for (const [name, value] of conn.settings)
          await db.query('SELECT set_config($1, $2, false)', [name, value]).catch(() => {});
      }
    }
    sessionOf = conn;
  };

  /** The backend listens on every channel some connection listens on, and on no other. */
  const reconcileChannels = async () => {
    channelsChanged = false;
    unnamedOwner = 0;
    const wanted = new Set<string>();
    for (const conn of conns.values()) for (const channel of conn.channels) wanted.add(channel);
    const { rows: listening } = await db.query<{ c: string }>('SELECT pg_listening_channels() AS c');
    const has = new Set(listening.map((r) => r.c));
    const quote = (c: string) => `"${c.replaceAll('"', '""')}"`;
    const statements = [
      ...[...wanted].filter((c) => !has.has(c)).map((c) => `LISTEN ${quote(c)}`),
      ...[...has].filter((c) => !wanted.has(c)).map((c) => `UNLISTEN ${quote(c)}`),
    ];
    if (statements.length > 0) await db.exec(statements.join(';'));
  };

  const armTimer = (conn: Conn, ms: number) => {
    clearTimeout(conn.timer);
    conn.timer = setTimeout(() => onWaitTimeout(conn), ms);
    conn.timer.unref();
  };

  /** Answers the connection's queued units with an error, as the backend would answer a failed query. */
  const refuseQueued = (conn: Conn, code: string, message: string) => {
    const error = errorResponse(code, message, 'ERROR');
    const ready = wireMessage('Z', Buffer.from('I', 'latin1'));
    const queue = conn.queue;
    conn.queue = [];
    for (const [i, m] of queue.entries()) {
      const type = String.fromCharCode(m[0] as number);
      if (type === 'X') {
        conn.queue = queue.slice(i);
        break;
      }
      if (conn.skipToSync) {
        if (type === 'S') {
          conn.skipToSync = false;
          send(conn, ready);
        }
      } else if (type === 'Q' || type === 'F') send(conn, Buffer.concat([error, ready]));
      else if (type === 'S') send(conn, ready);
      else if (type !== 'd' && type !== 'c' && type !== 'f') {
        // An extended-protocol cycle: one error, the rest up to its Sync dropped (as the backend does).
        send(conn, error);
        conn.skipToSync = true;
      }
    }
    const at = waiters.indexOf(conn);
    if (at >= 0 && conn.queue.length === 0) waiters.splice(at, 1);
  };

  const onWaitTimeout = (conn: Conn) => {
    if (conn.closed || !waiters.includes(conn)) return;
    const heldIdle = idleSince === undefined ? 0 : Date.now() - idleSince;
    if (heldIdle < waitMs) return armTimer(conn, waitMs - heldIdle);
    const holder = owner ? `connection ${owner.id}` : 'another connection';
    const what = owner?.inCopy
      ? 'a COPY'
      : owner?.inCycle
        ? 'an unfinished extended-protocol query (a cursor?)'
        : 'an open transaction';
    refuseQueued(
      conn,
      '55P03',
      `tapedeck PGLITE_ONE_BACKEND: the PGlite sandbox runs one transaction at a time, and ${holder} has held it idle in ${what} for ${Math.round(heldIdle / 1000)}s while this connection waited. A program that waits on one connection inside another's transaction needs a server sandbox: replay with --db postgres://…`,
    );
    pump();
  };

  const pump = () => {
    if (pumping) return;
    pumping = true;
    void (async () => {
      try {
        for (;;) {
          if (owner?.closed) owner = undefined;
          if (owner) {
            if (owner.queue.length > 0 && (holds(owner) || waiters.length === 0)) {
              idleSince = undefined;
              await runOwner(owner);
              continue;
            }
            if (holds(owner)) {
              idleSince ??= Date.now();
              break;
            }
            // Released between two units: it queues again behind the others.
            if (owner.queue.length > 0) {
              waiters.push(owner);
              armTimer(owner, waitMs);
            }
            owner = undefined;
          }
          idleSince = undefined;
          if (channelsChanged) {
            await reconcileChannels();
            continue;
          }
          const chore = chores.shift();
          if (chore) {
            await chore().catch(() => {});
            continue;
          }
          const next = waiters.shift();
          if (!next) break;
          clearTimeout(next.timer);
          if (next.closed || next.queue.length === 0) continue;
          owner = next;
          await handTo(next);
          // Its first unit runs before anyone else's turn comes round again.
          if (!next.closed) await runOwner(next);
        }
      } catch (error) {
        // The backend itself failed: every connection learns it, none hangs.
        for (const conn of conns.values()) {
          send(
            conn,
            errorResponse('XX000', `tapedeck PGLITE_FAILED: the PGlite sandbox failed: ${(error as Error).message}`),
          );
          conn.socket.destroy();
        }
      } finally {
        pumping = false;
      }
    })();
  };

  /** A connection has a message to run: it runs now if it holds the backend, else it waits its turn. */
  const enqueue = (conn: Conn, message: Buffer) => {
    if (conn.skipToSync) {
      if (message[0] === 'S'.charCodeAt(0)) {
        conn.skipToSync = false;
        send(conn, wireMessage('Z', Buffer.from('I', 'latin1')));
      }
      return;
    }
    if (message[0] === 'X'.charCodeAt(0) && conn.queue.length === 0) {
      conn.socket.end();
      void closeConn(conn);
      return;
    }
    conn.queue.push(message);
    if (owner !== conn && !waiters.includes(conn)) {
      waiters.push(conn);
      armTimer(conn, waitMs);
    }
    pump();
  };

  const closeConn = async (conn: Conn) => {
    if (conn.closed) return;
    conn.closed = true;
    clearTimeout(conn.timer);
    conns.delete(conn.id);
    const at = waiters.indexOf(conn);
    if (at >= 0) waiters.splice(at, 1);
    const hadChannels = conn.channels.size > 0;
    const statements = [...conn.statements];
    const wasTempOwner = tempOwner === conn;
    if (wasTempOwner) tempOwner = undefined;
    if (sessionOf === conn) sessionOf = undefined;
    // What the connection left open on the backend ends with it, as a server ends a backend.
    chores.push(async () => {
      if (conn.inCycle) await exec(wireMessage('S'));
      if (db.isInTransaction()) await exec(wireMessage('Q', cstrings('ROLLBACK')));
      for (const name of statements) await exec(wireMessage('C', Buffer.concat([Buffer.from('S'), cstrings(name)])));
      if (statements.length > 0) await exec(wireMessage('S'));
      if (wasTempOwner) await db.exec('DISCARD TEMP');
      if (hadChannels) channelsChanged = true;
    });
    if (owner === conn) owner = undefined;
    pump();
  };

  const startup = (conn: Conn, message: Buffer) => {
    const params = parseParams(message.subarray(8)) ?? new Map<string, string>();
    for (const [name, value] of params) {
      // Asking for what the backend has anyway (client_encoding UTF8) is no setting to carry.
      const base = [...reported].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
      if (!NOT_SETTINGS.has(name) && base !== value) conn.settings.set(name, value);
    }
    // options: "-c name=value" and "--name=value", as the server reads them.
    const words = (params.get('options') ?? '').match(/(?:\\.|\S)+/g) ?? [];
    for (let i = 0; i < words.length; i++) {
      const word = (words[i] as string).replaceAll(/\\(.)/g, '$1');
      const setting =
        word === '-c'
          ? (words[++i] ?? '').replaceAll(/\\(.)/g, '$1')
          : word.startsWith('--')
            ? word.slice(2)
            : word.startsWith('-c')
              ? word.slice(2)
              : '';
      const eq = setting.indexOf('=');
      if (eq > 0) conn.settings.set(setting.slice(0, eq).replaceAll('-', '_'), setting.slice(eq + 1));
    }
    const status = REPORTED.map((name) => {
      const value = [...conn.settings].find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? reported.get(name);
      return value === undefined ? Buffer.alloc(0) : wireMessage('S', cstrings(name, value));
    });
    const auth = Buffer.alloc(4);
    const keyData = Buffer.alloc(8);
    keyData.writeInt32BE(conn.pid, 0);
    keyData.writeInt32BE(conn.key, 4);
    send(
      conn,
      Buffer.concat([
        wireMessage('R', auth),
        ...status,
        wireMessage('K', keyData),
        wireMessage('Z', Buffer.from('I', 'latin1')),
      ]),
    );
    conn.started = true;
  };

  const onCancel = (message: Buffer) => {
    const pid = message.readInt32BE(8);
    const key = message.readInt32BE(12);
    const target = [...conns.values()].find((c) => c.pid === pid && c.key === key);
    // A query still waiting for the backend can be cancelled; one running in PGlite runs to its end.
    if (target && waiters.includes(target)) refuseQueued(target, '57014', 'canceling statement due to user request');
  };

  const onData = (conn: Conn, data: Buffer) => {
    conn.pending = conn.pending.length === 0 ? data : Buffer.concat([conn.pending, data]);
    while (!conn.closed) {
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
      enqueue(conn, message);
    }
  };

  const refuse = (conn: Conn, code: string, message: string) => {
    send(conn, errorResponse(code, message));
    conn.socket.end();
    void closeConn(conn);
  };

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => {});
    if (conns.size >= maxConnections) {
      socket.end(errorResponse('53300', 'sorry, too many clients already'));
      return;
    }
    const id = nextId++;
    const conn: Conn = {
      id,
      pid: 10_000 + id,
      key: randomInt(2 ** 31),
      socket,
      pending: Buffer.alloc(0),
      started: false,
      queue: [],
      settings: new Map(),
      channels: new Set(),
      statements: new Set(),
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
    conns.set(id, conn);
    socket.on('data', (data) => onData(conn, data));
    socket.on('close', () => void closeConn(conn));
  });
  const port = await listenOnLoopback(server);
  return {
    host: '127.0.0.1',
    port,
    async close() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const conn of conns.values()) conn.socket.destroy();
      await closing;
    },
  };
}
