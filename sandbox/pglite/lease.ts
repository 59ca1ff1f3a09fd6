// The backend taken in turns: a connection holds it for as long as the protocol needs it to be
// that connection's (a transaction, an extended-protocol cycle up to Sync, a COPY); the others
// wait, bounded. A connection that waits while the holder sits idle in its transaction gets a
// coded error instead of a hang; tapedeck's own connections (applying a served tool call's
// recorded changes) wait only briefly, since the agent is most likely waiting on that very call.
import { errorResponse } from '../../src/postgres/index.js';
import { readyFor, typeOf } from './messages.js';
import { reconcileChannels } from './notify.js';
import { handTo } from './session.js';
import { type Conn, isLive, type ServerState } from './state.js';

export interface Lease {
  /** A connection has a message to run: it runs now if it holds the backend, else it waits its turn. */
  enqueue(conn: Conn, message: Buffer): void;
  /** Runs what can run now. */
  pump(): void;
  /** Answers the connection's queued units with an error, as the backend would answer a failed query. */
  refuseQueued(conn: Conn, code: string, message: string): void;
  isWaiting(conn: Conn): boolean;
  /** The connection is gone: it waits no more. */
  forget(conn: Conn): void;
}

const holds = (conn: Conn) => conn.status !== 'I' || conn.inCycle || conn.inCopy;

export function createLease(
  state: ServerState,
  hooks: {
    /** Runs the owner's next messages, up to the end of one unit of work. */
    runOwner(conn: Conn): Promise<void>;
    send(conn: Conn, data: Buffer): void;
    /** Ends a connection whose queue reached its Terminate. */
    terminate(conn: Conn): void;
  },
): Lease {
  let pumping = false;
  const { waiters } = state;

  const armTimer = (conn: Conn, ms: number) => {
    clearTimeout(conn.timer);
    conn.timer = setTimeout(() => onWaitTimeout(conn), ms);
    conn.timer.unref();
  };
  const waitOf = (conn: Conn) => (conn.own ? state.ownWaitMs : state.waitMs);
  const wait = (conn: Conn) => {
    waiters.push(conn);
    armTimer(conn, waitOf(conn));
  };

  const refuseQueued = (conn: Conn, code: string, message: string) => {
    const error = errorResponse(code, message, 'ERROR');
    const queue = conn.queue;
    conn.queue = [];
    for (const [i, m] of queue.entries()) {
      const type = typeOf(m);
      if (type === 'X') {
        conn.queue = queue.slice(i);
        break;
      }
      if (conn.skipToSync) {
        if (type === 'S') {
          conn.skipToSync = false;
          hooks.send(conn, readyFor('I'));
        }
      } else if (type === 'Q' || type === 'F') hooks.send(conn, Buffer.concat([error, readyFor('I')]));
      else if (type === 'S') hooks.send(conn, readyFor('I'));
      else if (type !== 'd' && type !== 'c' && type !== 'f') {
        // An extended-protocol cycle: one error, the rest up to its Sync dropped (as the backend does).
        hooks.send(conn, error);
        conn.skipToSync = true;
      }
    }
    const at = waiters.indexOf(conn);
    if (at >= 0 && conn.queue.length === 0) waiters.splice(at, 1);
  };

  const onWaitTimeout = (conn: Conn) => {
    if (conn.closed || !waiters.includes(conn)) return;
    const heldIdle = state.idleSince === undefined ? 0 : Date.now() - state.idleSince;
    const limit = waitOf(conn);
    if (heldIdle < limit) return armTimer(conn, limit - heldIdle);
    const owner = state.owner;
    const holder = owner ? `connection ${owner.id}` : 'another connection';
    const what = owner?.inCopy
      ? 'a COPY'
      : owner?.inCycle
        ? 'an unfinished extended-protocol query (a cursor?)'
        : 'an open transaction';
    const seconds = (heldIdle / 1000).toFixed(1);
    refuseQueued(
      conn,
      '55P03',
      conn.own
        ? `tapedeck PGLITE_ONE_BACKEND: the PGlite sandbox runs one transaction at a time, and ${holder} holds ${what} open across a tool call (idle ${seconds}s): the call's recorded database changes cannot be applied beside it. Replay with --db postgres://… for an agent that calls tools inside a transaction.`
        : `tapedeck PGLITE_ONE_BACKEND: the PGlite sandbox runs one transaction at a time, and ${holder} has held it idle in ${what} for ${seconds}s while this connection waited. A program that waits on one connection inside another's transaction needs a server sandbox: replay with --db postgres://…`,
    );
    pump();
  };

  const pump = () => {
    if (pumping) return;
    pumping = true;
    void (async () => {
      try {
        for (;;) {
          if (state.owner?.closed) state.owner = undefined;
          const owner = state.owner;
          if (owner) {
            if (owner.queue.length > 0 && (holds(owner) || waiters.length === 0)) {
              state.idleSince = undefined;
              await hooks.runOwner(owner);
              continue;
            }
            if (holds(owner)) {
              state.idleSince ??= Date.now();
              break;
            }
            // Released between two units: it queues again behind the others.
            if (owner.queue.length > 0) wait(owner);
            state.owner = undefined;
          }
          state.idleSince = undefined;
          if (state.channelsChanged) {
            await reconcileChannels(state);
            continue;
          }
          const chore = state.chores.shift();
          if (chore) {
            await chore().catch(() => {});
            continue;
          }
          const next = waiters.shift();
          if (!next) break;
          clearTimeout(next.timer);
          if (next.closed || next.queue.length === 0) continue;
          state.owner = next;
          await handTo(state, next);
          // Its first unit runs before anyone else's turn comes round again.
          if (isLive(next)) await hooks.runOwner(next);
        }
      } catch (error) {
        // The backend itself failed: every connection learns it, none hangs.
        for (const conn of state.conns.values()) {
          hooks.send(
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

  const enqueue = (conn: Conn, message: Buffer) => {
    if (conn.skipToSync) {
      if (typeOf(message) === 'S') {
        conn.skipToSync = false;
        hooks.send(conn, readyFor('I'));
      }
      return;
    }
    if (typeOf(message) === 'X' && conn.queue.length === 0) return hooks.terminate(conn);
    conn.queue.push(message);
    if (state.owner !== conn && !waiters.includes(conn)) wait(conn);
    pump();
  };

  return {
    enqueue,
    pump,
    refuseQueued,
    isWaiting: (conn) => waiters.includes(conn),
    forget(conn) {
      clearTimeout(conn.timer);
      const at = waiters.indexOf(conn);
      if (at >= 0) waiters.splice(at, 1);
    },
  };
}
