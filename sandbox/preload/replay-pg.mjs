// @ts-check
// The replay's side of shared-pg-replies.mjs: the replies of the process's Postgres connections
// reach the agent in the order the recording noted them, each once the process has drawn the
// values it had drawn when that reply came (replay-nondeterminism.mjs `hold`). So tasks waiting on
// the database resume in their recorded order: each takes its own recorded values, and a pool
// hands its connections to the same queries. A reply waits behind the replies recorded before it,
// at most WITHIN_MS (stretched by the machine's load: shared-clock.mjs); past that (the agent makes other queries now, or its transactions meet in
// another order) replies go as they come (`late` counts the replies that went so). In PGlite, which
// runs one transaction at a time, a reply inside a transaction is never held (it would hold every
// other connection, the replayer's too): it goes, counted late when not in its turn. What comes
// behind a held reply on its socket (more bytes, 'end', 'close', an error) waits behind it.
import { loadStretch } from './shared-clock.mjs';
import { dbRepliesByConnection, watchPgConnections } from './shared-pg-replies.mjs';

// Taken at load: an agent's fake timers do not hold the replay's own.
const realSetTimeout = setTimeout;
const realClearTimeout = clearTimeout;
const realSetImmediate = setImmediate;
/** How long a reply waits at most for the replies and values recorded before it. */
const WITHIN_MS = 2000;
/** ReadyForQuery's status outside a transaction. */
const IDLE = 0x49; // 'I'

/**
 * Installs the holds. `recorded`: the process's recorded `dbReply` values; `hold(drawn)`: the
 * nondeterminism's (undefined: go now); `self`: the process's name as `drawn` names it; `skip()`:
 * a connect of tapedeck's own; `targets`: the sandbox database's address to the recorded one's.
 * Returns { late() } or undefined when the recording noted no reply.
 * @param {unknown} recorded
 * @param {(drawn: { counts: Record<string, Record<string, number>>, withinMs: number }) => Promise<void> | undefined} hold
 * @param {string} self
 * @param {() => boolean} skip
 * @param {Record<string, string>} [targets]
 * @param {boolean} [oneBackend] the sandbox database runs one transaction at a time (PGlite)
 * @param {(need: Record<string, number>) => boolean} [drawnAsMany] whether the process has drawn as many values
 */
export function holdPgReplies(recorded, hold, self, skip, targets, oneBackend = false, drawnAsMany = () => true) {
  const { byConnection, total } = dbRepliesByConnection(recorded);
  if (total === 0) return undefined;
  // The recorded order: replies delivered (`done`), the first not yet (`first`).
  const done = new Uint8Array(total);
  let first = 0;
  let ordering = true;
  let late = 0;
  /** @type {Set<() => void>} */
  const waiting = new Set();
  const wake = () => {
    for (const check of [...waiting]) check();
  };
  const inTurn = (/** @type {number} */ index) => !ordering || first >= index;
  /** Resolves once every reply recorded before `index` has gone, or at the bound (then replies go as they come). */
  const turn = (/** @type {number} */ index) =>
    new Promise((resolve) => {
      const timer = realSetTimeout(() => {
        waiting.delete(check);
        if (ordering) {
          ordering = false;
          late += total - first;
          wake();
        }
        resolve(undefined);
      }, WITHIN_MS * loadStretch());
      const check = () => {
        if (!inTurn(index)) return;
        waiting.delete(check);
        realClearTimeout(timer);
        resolve(undefined);
      };
      waiting.add(check);
    });
  const delivered = (/** @type {number} */ index) => {
    done[index] = 1;
    while (first < total && done[first] === 1) first++;
    // In a turn of its own, as replies come from the network: what the agent does with this one
    // (a draw, its next query) comes first.
    if (waiting.size > 0) realSetImmediate(wake);
  };

  watchPgConnections({
    skip,
    targets,
    connection: (name, socket, reader) => {
      const replies = byConnection.get(name);
      if (replies === undefined) return;
      let next = 0;
      /** @type {Array<{ event: string | symbol, args: any[], ends?: number[], from: number }>} */
      const queue = [];
      let held = false;
      let pumping = false;
      /** @type {(...args: any[]) => boolean} */
      const emit = socket.emit;
      const wait = (/** @type {Promise<unknown>} */ until) => {
        held = true;
        void until.then(() => {
          held = false;
          pump();
        });
      };
      const drain = () => {
        while (!held && queue.length > 0) {
          const item = /** @type {(typeof queue)[number]} */ (queue[0]);
          if (item.event !== 'data' || !Buffer.isBuffer(item.args[0])) {
            queue.shift();
            emit.call(socket, item.event, ...item.args);
            continue;
          }
          const chunk = /** @type {Buffer} */ (item.args[0]);
          item.ends ??= reader.server(chunk);
          const end = item.ends[0];
          if (end === undefined) {
            queue.shift();
            if (item.from < chunk.length)
              emit.call(socket, 'data', item.from === 0 ? chunk : chunk.subarray(item.from));
            continue;
          }
          const reply = replies[next];
          // PGlite runs one transaction at a time: a reply held inside one (ReadyForQuery 'T' or
          // 'E') would hold every other connection, the replayer's own too.
          const inTransaction = oneBackend && chunk[end - 1] !== IDLE;
          // Let go out of its turn: counted, and the replay says why.
          if (reply !== undefined && inTransaction && ordering && !(inTurn(reply.index) && drawnAsMany(reply.need)))
            late++;
          if (reply !== undefined && !inTransaction) {
            if (!inTurn(reply.index)) return wait(turn(reply.index));
            const drawn = hold({ counts: { [self]: reply.need }, withinMs: WITHIN_MS });
            if (drawn !== undefined) return wait(drawn);
          }
          next++;
          item.ends.shift();
          const from = item.from;
          item.from = end;
          emit.call(socket, 'data', from === 0 && end === chunk.length ? chunk : chunk.subarray(from, end));
          if (reply !== undefined) delivered(reply.index);
        }
      };
      const pump = () => {
        if (pumping) return;
        pumping = true;
        try {
          drain();
        } finally {
          pumping = false;
        }
      };
      socket.emit = function (/** @type {string | symbol} */ event, /** @type {any[]} */ ...args) {
        if (queue.length === 0 && !held && event !== 'data') return emit.call(this, event, ...args);
        queue.push({ event, args, from: 0 });
        pump();
        return true;
      };
    },
  });
  return { late: () => late };
}
