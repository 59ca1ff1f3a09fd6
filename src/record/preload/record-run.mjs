// @ts-check
// One recorded run in the capture layer (record.mjs): its state (createRun), and the book a layer
// keeps of its runs' messages (createRunBook): what goes to the recorder and when (send, with the
// values drawn before it: flushRun), the step barriers the agent waits at while the world is
// drained (opening, closing and their round trips), the files its own file calls in flight hold
// (busy), the nondeterministic values it draws, its background stream readers.
import { AsyncLocalStorage } from 'node:async_hooks';
import path from 'node:path';
import { bytesToHex, patchNondeterminism } from '../../../sandbox/preload/shared-nondeterminism.mjs';
import { dbReplyEntry } from '../../../sandbox/preload/shared-pg-replies.mjs';
import { threadOrigin } from '../../../sandbox/preload/shared-process.mjs';
import { nowMs } from '../../../sandbox/preload/shared-wire.mjs';
import { createQuietWorld } from './record-quiet.mjs';
import { flushWebSockets } from './record-websocket.mjs';

/** @typedef {import('./record.mjs').CaptureSink} CaptureSink */
/** @typedef {import('../../../sandbox/protocol.js').NdBatch} NdBatch */

/** Messages whose handling drains the world in the recorder (src/record/session.ts): they carry `busy`. */
const DRAINING = new Set(['res', 'xchg', 'end', 'tool', 'rpc']);

/**
 * One recorded run's state in the capture layer: where its messages go, the nondeterministic
 * values drawn since its last message, its background stream readers. A child process has one;
 * an in-process recorder has one per concurrent record() (see installSharedCapture).
 * options: { maxBody = -1 (no cap), syncWorld = false, nondeterminism = true, quietWorld? }:
 * quietWorld (with syncWorld, when the world is an fs root alone) skips the round trip of a step
 * barrier when nothing under the root changed since the last one (record-quiet.mjs).
 * @param {CaptureSink} sink
 * @param {{ maxBody?: number, syncWorld?: boolean, nondeterminism?: boolean, quietWorld?: { root: string, exclude: string[] } }} [options]
 */
export function createRun(sink, options = {}) {
  const quietWorld = options.syncWorld === true ? options.quietWorld : undefined;
  return {
    sink,
    lazy: sink.lazy === true,
    maxBody: typeof options.maxBody === 'number' ? options.maxBody : -1,
    syncWorld: options.syncWorld === true,
    nondeterminism: options.nondeterminism !== false,
    quiet: quietWorld === undefined ? undefined : createQuietWorld(quietWorld.root, quietWorld.exclude ?? []),
    /** The files this run's own file calls in flight are changing (absolute path -> how many calls). */
    busy: new Map(),
    /** The step barriers' round trips not answered yet: the recorder has not drained for them. */
    roundTrips: new Set(),
    /** Values drawn since the last message, by kind; `dbReply`: the database replies that came meanwhile (shared-pg-replies.mjs). */
    nd: { clock: [], random: [], uuid: [], randomBytes: [], hrtime: [], dbReply: [] },
    ndCount: 0,
    /** The values already written, by kind: with those in `nd`, what the run has drawn (drawnNow). */
    written: { clock: 0, random: 0, uuid: 0, randomBytes: 0, hrtime: 0, dbReply: 0 },
    toolSeq: 0,
    streams: new Set(),
    closed: false,
  };
}

// Taken at load: an agent's fake timers do not hold the recorder's own turn-end writes.
const realSetImmediate = setImmediate;
/**
 * The capture's async context, `{ run, tool }`: `run`, the in-process run the work belongs to
 * (installSharedCapture; a child process's layer has its one run and leaves it unset); `tool`,
 * the tool() call in progress (`{ run, db }`): values drawn inside it are the tool's (a replay
 * serves the tool without running it), and row changes its own database statements commit are
 * its effects (observed world capture). One store for both: every AsyncLocalStorage in use costs
 * each promise the process makes (its store is copied onto it, ~70 ns each).
 */
export const captureContext = new AsyncLocalStorage();

/** The tool() call in progress in the current async context, if any. */
export function currentTool() {
  return captureContext.getStore()?.tool;
}

/** Runs fn as the body of a tool() call (`state`: `{ run, db }`), in the context it was called in. */
export function withinTool(state, fn) {
  return captureContext.run({ run: captureContext.getStore()?.run, tool: state }, fn);
}

/**
 * The book of the runs `current()` names (undefined: none): their messages, barriers, held files,
 * drawn values and streams. options: those of installLayer (processName, fsRoot, valuesEachTurn,
 * nondeterminism). `enter()`/`leave()` bracket tapedeck's own work (`suppressed()` while inside).
 */
export function createRunBook(current, options) {
  const pid = process.pid;
  // What ids of this thread's calls start with: a worker thread's are not its process's.
  const origin = threadOrigin();
  const named = typeof options.processName === 'string' ? { process: options.processName } : {};
  const valuesEachTurn = options.valuesEachTurn === true;
  /** The values a turn drew, written as it ends (not a turn later, with the batch they join). */
  const flushTurn = (run) => {
    flushRun(run);
    run.sink.flush?.();
  };
  let depth = 0;
  const suppressed = () => depth > 0;

  // The run's own file calls in flight (sandbox/preload/shared-file-ops.mjs) and the drains of the world: calls that
  // overlap (a model's tool calls run at once) each have their own barriers, and a drain at one
  // call's boundary would find on disk what another file call wrote before its message arrived.
  // A file call holds the paths it changes from before its opening barrier until its message is
  // sent; every barrier and every message whose handling drains carries them (`busy`), and the
  // recorder leaves those files to the file call's own message (src/record/world/fs.ts).
  const fsRoot = typeof options.fsRoot === 'string' ? path.resolve(options.fsRoot) : undefined;
  /**
   * A file call of the run starts changing `paths` (absolute); its token, given back to release().
   * @returns {{ paths: string[], held: boolean }}
   */
  const hold = (run, paths) => {
    for (const abs of paths) run.busy.set(abs, (run.busy.get(abs) ?? 0) + 1);
    return { paths, held: paths.length > 0 };
  };
  /** The file call's message is sent: its paths are its message's to carry, not held any more. */
  const release = (run, mine) => {
    if (mine === undefined || !mine.held) return;
    mine.held = false;
    for (const abs of mine.paths) {
      const n = (run.busy.get(abs) ?? 1) - 1;
      if (n > 0) run.busy.set(abs, n);
      else run.busy.delete(abs);
    }
  };
  /** Whether another file call of the run in flight holds `abs` (`mine`: the asking call, whose own hold does not count). */
  const heldByOthers = (run, mine, abs) =>
    (run.busy.get(abs) ?? 0) > (mine?.held === true && mine.paths.includes(abs) ? 1 : 0);
  /** The same, asked when it is used (a quiet world's look comes a few turns after the boundary starts). */
  const othersBusy = (run, mine) => ({ has: (abs) => heldByOthers(run, mine, abs) });
  /** The paths the run's other file calls in flight hold, relative to the fs root as the recorder names files. */
  const busyOf = (run, mine) => {
    if (fsRoot === undefined || run.busy.size === 0) return undefined;
    const out = [];
    for (const abs of run.busy.keys())
      if (heldByOthers(run, mine, abs)) out.push(path.relative(fsRoot, abs).split(path.sep).join('/'));
    return out.length === 0 ? undefined : out;
  };
  /** A message whose handling drains the world, with the paths held by the run's file calls in flight. */
  const withBusy = (message, busy) => {
    const add = (m) => (DRAINING.has(m?.t) ? { ...m, busy } : m);
    return typeof message === 'function' ? () => add(message()) : add(message);
  };

  /** `counted`: a quiet world is told of it (false: a barrier's own closing message); `mine`: the file call sending it. */
  const send = (run, message, counted = true, mine = undefined) => {
    if (run.closed) return;
    // A call's end: the run's WebSocket turns so far are written first (their steps come before it).
    if (typeof message === 'function' || DRAINING.has(message?.t)) flushWebSockets(run);
    if (counted) run.quiet?.sent(message);
    const busy = run.busy.size === 0 ? undefined : busyOf(run, mine);
    const out = busy === undefined ? message : withBusy(message, busy);
    depth++;
    try {
      run.sink.send(typeof out === 'function' && !run.lazy ? out() : out);
    } finally {
      depth--;
    }
  };

  /**
   * A step barrier's round trip: the recorder drains the world (leaving the files the run's file
   * calls in flight hold) and answers. Kept until answered: a boundary that skips its own round
   * trip meanwhile waits for it (see opening).
   */
  const roundTrip = (run, barrier, mine) => {
    const busy = busyOf(run, mine);
    const answer = run.sink.sync(busy === undefined ? barrier : { ...barrier, busy });
    run.roundTrips.add(answer);
    const done = () => run.roundTrips.delete(answer);
    answer.then(done, done);
    return answer;
  };

  const flushRun = (run) => {
    if (run.ndCount === 0 && run.nd.dbReply.length === 0) return;
    /** @type {NdBatch} */
    const batches = { ...named };
    for (const kind of Object.keys(run.nd)) {
      if (run.nd[kind].length > 0) {
        batches[kind] = run.nd[kind];
        run.written[kind] += run.nd[kind].length;
        run.nd[kind] = [];
      }
    }
    run.ndCount = 0;
    send(run, { t: 'nd', pid, ts: nowMs(), batches });
  };
  /**
   * What the run has drawn so far, by kind (the kinds it drew any of), named after this process:
   * taken when a response's head reaches the agent, carried by the exchange's message (`drawn`,
   * src/record/protocol.ts), which goes once the body has ended. A few additions, no message.
   * @returns {import('../protocol.js').MessageOf<'xchg'>['drawn']}
   */
  const drawnNow = (run) => {
    if (!run.nondeterminism) return undefined;
    /** @type {Record<string, number>} */
    const counts = {};
    for (const kind in run.written) {
      if (kind === 'dbReply') continue;
      const n = run.written[kind] + run.nd[kind].length;
      if (n > 0) counts[kind] = n;
    }
    return { ...named, counts };
  };

  /**
   * One of the run's Postgres connections got a reply: what the run had drawn by then is noted
   * with the values (`dbReply`, not counted as one: `ndCount`), and goes with the next of them,
   * the run's next message or its exit. A process killed meanwhile loses its last few: a replay
   * then holds back fewer replies.
   */
  const noteDbReply = (run, connection) => {
    if (!run.nondeterminism || run.closed) return;
    if (run.nd.dbReply.push(dbReplyEntry(connection, drawnNow(run)?.counts ?? {})) >= 1000) flushRun(run);
  };

  const restoreNondeterminism =
    options.nondeterminism === false
      ? () => {}
      : patchNondeterminism(
          (kind, value) => {
            const run = current();
            if (run === undefined || !run.nondeterminism || run.closed) return value;
            run.nd[kind].push(kind === 'randomBytes' ? bytesToHex(value) : value);
            if (++run.ndCount >= 1000) flushRun(run);
            else if (valuesEachTurn && run.ndCount === 1) realSetImmediate(flushTurn, run);
            return value;
          },
          // Outside any run, in one that does not record values, or inside one of its tool() calls
          // (the tool's result is recorded, not the values it drew), a draw costs a lookup or two:
          // the clock's stack check (~15 us of CPU a read in a busy server) is skipped too.
          () => {
            if (depth > 0) return true;
            const run = current();
            return run === undefined || run.nondeterminism !== true || run.closed || currentTool()?.run === run;
          },
        );

  const track = (run, reading) => {
    run.streams.add(reading);
    void reading.finally(() => run.streams.delete(reading));
  };
  // A stream the agent has just finished reading ends on our side a few microtasks later: let
  // it, so the model step is complete before the next call (the agent's tool call) starts.
  const settleStreams = (run) =>
    run.streams.size === 0
      ? undefined
      : Promise.race([Promise.all(run.streams), new Promise((resolve) => setTimeout(resolve, 20))]);

  // Step barriers (world capture): the agent waits while the recorder drains the world, before a
  // call (`opening`) and after it, once the message that ends it is sent (`closing`). With a quiet
  // world (record-quiet.mjs) a boundary at which nothing changed skips its round trip, and the
  // closing message says so (`quiet`): the recorder then does not drain for it (the agent has moved
  // on). When a few files changed, the agent reads them itself and the boundary's message carries
  // them (`files`, with `quiet`): before a call a message of their own, after it the call's end.
  // `mine`: the file call at the boundary (its held paths are its own, not another call's).
  const opening = async (run, reason, id, mine) => {
    if (!run.syncWorld) return;
    if (run.quiet !== undefined) {
      const seen = await run.quiet.check(othersBusy(run, mine));
      if (seen !== false) {
        if (seen !== true) send(run, { t: 'files', ts: nowMs(), files: seen, quiet: true });
        // Another call's round trip not answered yet: the recorder drains for it later, and would
        // find what this call does. Nothing to wait for when calls do not overlap.
        if (run.roundTrips.size > 0) await Promise.allSettled(run.roundTrips);
        return;
      }
    }
    await roundTrip(run, id === undefined ? { reason } : { reason, id }, mine);
  };
  const closing = async (run, message, id, mine) => {
    if (!run.syncWorld) {
      send(run, message, true, mine);
      release(run, mine);
      return;
    }
    const seen = run.quiet === undefined ? false : await run.quiet.check(othersBusy(run, mine));
    // Not counted as a message that drains: the round trip that follows (or its skipping) settles it.
    let marked = message;
    if (seen !== false) {
      const mark = (m) => {
        const files = [...(m.files ?? []), ...(seen === true ? [] : seen)];
        return { ...m, quiet: true, ...(files.length > 0 ? { files } : {}) };
      };
      marked = typeof message === 'function' ? () => mark(message()) : mark(message);
    }
    send(run, marked, false, mine);
    release(run, mine);
    if (seen === false) await roundTrip(run, id === undefined ? { reason: 'res' } : { reason: 'res', id });
  };

  return {
    pid,
    origin,
    enter: () => depth++,
    leave: () => depth--,
    suppressed,
    hold,
    release,
    othersBusy,
    send,
    roundTrip,
    flushRun,
    drawnNow,
    noteDbReply,
    restoreNondeterminism,
    track,
    settleStreams,
    opening,
    closing,
  };
}
