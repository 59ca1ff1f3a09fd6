// @ts-check
// The replay preload's IPC client: newline-delimited JSON to the replayer over a Unix socket
// (or loopback TCP inside the OS sandbox).
// Unlike the recorder's client it writes through the socket (no synchronous fd writes): a replay
// asks and waits for every answer, so nothing is lost if the agent dies, and it is faster. The
// one synchronous write is at the process's exit (flushSync), for the notices still batched.
import fs from 'node:fs';
import net from 'node:net';
import { dispatchReplies } from './shared-ipc.mjs';
import { monotonicNow } from './shared-wire.mjs';

/** @typedef {import('../protocol.js').ReplayNotice} ReplayNotice */
/** @typedef {import('../protocol.js').ReplayQuestion} ReplayQuestion */
/** @typedef {import('../protocol.js').ReplayReply & { ack: number }} AckedReply */

/** Notices a batch holds before it is written without waiting for its timer. */
const BATCH_LINES = 32;

/**
 * Connects to `path`. Returns { send(notice, {batch}), sync(question): Promise<reply>, takeBuffered() };
 * idle, it never keeps the agent alive. Batched notices are written together (a few ms later, or
 * before the next question); whatever is still buffered at exit is taken by takeBuffered().
 * @param {string} path
 */
export function connectReplayIpc(path) {
  // `tcp:HOST:PORT` inside the OS sandbox (no Unix sockets there), else a Unix socket path.
  const tcp = /^tcp:(.+):(\d+)$/.exec(String(path));
  const socket = tcp ? net.createConnection(Number(tcp[2]), tcp[1]) : net.createConnection(path);
  const pending = new Map();
  let nextSync = 1;
  let broken = false;
  let buffer = [];
  let timer;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer.length > 0 && !broken) socket.write(buffer.join(''));
    buffer = [];
  };
  socket.unref();
  socket.setNoDelay?.(true);
  dispatchReplies(socket, pending);
  const fail = () => {
    broken = true;
    for (const waiter of pending.values()) waiter({ ack: -1, error: { code: 'IPC_CLOSED', message: 'ipc closed' } });
    pending.clear();
  };
  socket.on('error', fail);
  socket.on('close', fail);

  return {
    /** @param {ReplayNotice} message @param {{ batch?: boolean }} [options] */
    send(message, options = {}) {
      if (broken) return;
      buffer.push(`${JSON.stringify(message)}\n`);
      // A batch is also written once it is this long: an agent whose calls the fast index answers
      // without returning to the event loop would otherwise hold every notice until its exit, and
      // the replayer (on another core) would start on them only then.
      if (!options.batch || buffer.length >= BATCH_LINES) return flush();
      if (!timer) {
        timer = setTimeout(flush, 5);
        timer.unref();
      }
    },
    /** Writes batched notices now (before the agent starts a program that will ask the proxy). */
    flush() {
      if (!broken) flush();
    },
    /**
     * Writes the batched notices now, synchronously, to the socket's descriptor: at the process's
     * exit, where nothing asynchronous runs. A process's last notices then reach the replayer
     * before the process is gone, so before anything its parent does after waiting for it (a call
     * a child answered from the fast index is recorded as served before the parent's next call
     * is matched). Lines it could not write whole stay for takeBuffered(); the replayer drops a
     * line cut short.
     */
    flushSync() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      const fd = /** @type {any} */ (socket)._handle?.fd;
      if (buffer.length === 0 || broken || typeof fd !== 'number' || fd < 0 || socket.connecting) return;
      // Not the agent's clocks (Date.now(), performance.now()), which the replay serves from the recording.
      const until = monotonicNow() + 500;
      while (buffer.length > 0) {
        const line = Buffer.from(/** @type {string} */ (buffer[0]), 'utf8');
        let written = 0;
        while (written < line.length) {
          try {
            written += fs.writeSync(fd, line, written);
          } catch (error) {
            const code = /** @type {NodeJS.ErrnoException} */ (error).code;
            if (code !== 'EAGAIN' || monotonicNow() > until) return;
          }
        }
        buffer.shift();
      }
    },
    /**
     * Writes the batched notices now, synchronously when nothing is still queued on the socket
     * (else behind what is, as flush() does): before a worker thread's message to its parent,
     * which may end the thread at once (flushBeforePosting in shared-process.mjs).
     */
    flushNow() {
      if (socket.writableLength === 0) this.flushSync();
      if (buffer.length > 0 && !broken && !socket.connecting) flush();
    },
    /** @returns {ReplayNotice[]} */
    takeBuffered() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      const lines = buffer;
      buffer = [];
      return lines.map((line) => JSON.parse(line));
    },
    /** @param {ReplayQuestion} message @returns {Promise<AckedReply>} */
    sync(message) {
      if (broken) return Promise.resolve({ ack: -1 });
      const n = nextSync++;
      /** @type {Promise<AckedReply>} */
      const reply = new Promise((resolve) => pending.set(n, resolve));
      socket.ref();
      buffer.push(`${JSON.stringify({ ...message, t: 'sync', n })}\n`);
      flush();
      return reply;
    },
  };
}
