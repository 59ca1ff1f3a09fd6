// @ts-check
// IPC client used inside the agent process: newline-delimited JSON to the parent over a
// Unix socket; replies ({"ack":n}) resolve sync(). With a spool folder, events are appended to
// this process's own file there instead (cheaper than a socket write, and no reader is woken
// per event); the socket then carries only sync() barriers, and the parent reads the spool up
// to the barrier first. Events are written synchronously at the end of the event-loop turn in
// which they happened (and before a barrier, and at exit), so what the agent finished is in the
// kernel before it can crash, except what happened in the very turn a SIGKILL cut short.
import { createCipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

// Taken before the agent's clocks are patched: a spool file's name is not the agent's reading.
const hrtimeBigint = process.hrtime.bigint;

/**
 * Connects to the parent's socket. Returns { send(obj | () => obj), sync(obj): Promise<reply>,
 * flush(), close(), lazy: true }: send() may be given a function that builds the event when it
 * is written.
 * The socket never keeps the agent alive unless a sync() is waiting for its reply.
 */
export function connectIpc(path, options = {}) {
  let spool = -1;
  /** @type {import('node:crypto').Cipher | undefined} */
  let cipher;
  if (options.spoolDir) {
    try {
      spool = fs.openSync(join(options.spoolDir, `${process.pid}-${hrtimeBigint()}.ndjson`), 'a');
      // The spool holds requests before redaction: with a key (given in the environment, never
      // written to disk) it is AES-256-CTR, one stream per file after a 16-byte IV, so what a
      // killed recorder leaves on disk is noise once the key's processes are gone.
      if (options.spoolKey) {
        const iv = randomBytes(16);
        fs.writeSync(spool, iv);
        cipher = createCipheriv('aes-256-ctr', Buffer.from(options.spoolKey, 'hex'), iv);
      }
    } catch {
      spool = -1;
    }
  }
  // `tcp:HOST:PORT` inside the OS sandbox (no Unix sockets there), else a Unix socket path.
  const tcp = /^tcp:(.+):(\d+)$/.exec(String(path));
  const socket = tcp ? net.createConnection(Number(tcp[2]), tcp[1]) : net.createConnection(path);
  const queue = [];
  const pending = new Map();
  let fd = -1;
  let connected = false;
  let broken = false;
  let nextSync = 1;

  socket.unref();
  socket.setNoDelay?.(true);
  socket.on('connect', () => {
    connected = true;
    // The socket's file descriptor (not public API): written to synchronously when there is one.
    const handle = /** @type {{ _handle?: { fd?: number } }} */ (/** @type {unknown} */ (socket))._handle;
    fd = handle && typeof handle.fd === 'number' && handle.fd >= 0 ? handle.fd : -1;
    const lines = queue.splice(0);
    if (lines.length > 0) writeLine(lines.join(''));
  });
  dispatchReplies(socket, pending);
  const fail = () => {
    broken = true;
    for (const waiter of pending.values()) waiter({ ack: -1, error: 'ipc closed' });
    pending.clear();
  };
  socket.on('error', fail);
  socket.on('close', fail);

  function writeLine(text) {
    if (broken) return;
    if (fd < 0) {
      socket.write(text);
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
      } catch (error) {
        // The fd is non-blocking: a full kernel buffer means the parent is behind; wait for it.
        if (/** @type {NodeJS.ErrnoException} */ (error)?.code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
          continue;
        }
        broken = true;
        return;
      }
    }
  }

  function toSocket(line) {
    if (connected) writeLine(line);
    else queue.push(line);
  }

  function toSpool(text) {
    if (cipher) {
      try {
        const bytes = cipher.update(text, 'utf8');
        let offset = 0;
        while (offset < bytes.length) offset += fs.writeSync(spool, bytes, offset, bytes.length - offset);
      } catch {
        // The stream is cut: nothing more goes to this file (its reader drops a torn tail).
        spool = -1;
        toSocket(text);
      }
      return;
    }
    try {
      // A string goes to the kernel without an intermediate Buffer; a short write is finished bytewise.
      const written = fs.writeSync(spool, text);
      if (written < Buffer.byteLength(text)) {
        const bytes = Buffer.from(text, 'utf8');
        let offset = written;
        while (offset < bytes.length) offset += fs.writeSync(spool, bytes, offset, bytes.length - offset);
      }
    } catch {
      spool = -1;
      toSocket(text);
    }
  }

  // Events wait in `pending` until the agent's current turn of the event loop ends (or a sync
  // barrier, a large backlog, or exit), then are built and written in one go: the agent's path
  // keeps references only, and the write overlaps the agent's next wait on the network.
  let pendingEvents = [];
  let scheduled = false;
  function flush() {
    scheduled = false;
    if (pendingEvents.length === 0) return;
    const events = pendingEvents;
    pendingEvents = [];
    let text = '';
    for (const event of events) {
      let message;
      try {
        message = typeof event === 'function' ? event() : event;
      } catch {
        continue;
      }
      text += `${JSON.stringify(message)}\n`;
    }
    if (text.length === 0) return;
    if (spool >= 0) toSpool(text);
    else toSocket(text);
  }
  process.on('exit', flush);

  function send(message) {
    pendingEvents.push(message);
    if (pendingEvents.length >= 256) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }

  function sync(message) {
    if (broken) return Promise.resolve({ ack: -1 });
    const n = nextSync++;
    const reply = new Promise((resolve) => pending.set(n, resolve));
    socket.ref();
    // Everything sent before the barrier is written before it.
    flush();
    toSocket(`${JSON.stringify({ ...message, t: 'sync', n })}\n`);
    return reply;
  }

  return {
    send,
    sync,
    lazy: true,
    get connected() {
      return connected && !broken;
    },
    /** Writes every event sent so far now. */
    flush,
    close() {
      flush();
      socket.end();
    },
  };
}

/**
 * Resolves the waiter of each `{"ack": n}` reply line that arrives on the socket, and lets the
 * socket stop keeping the agent alive once no one waits. Shared by the record and replay clients.
 */
export function dispatchReplies(socket, pending) {
  // A reply's body may hold a character split across two chunks: decoded across them.
  const decoder = new StringDecoder('utf8');
  let input = '';
  socket.on('data', (data) => {
    input += decoder.write(data);
    let nl = input.indexOf('\n');
    while (nl >= 0) {
      const line = input.slice(0, nl);
      input = input.slice(nl + 1);
      nl = input.indexOf('\n');
      if (line.length === 0) continue;
      let reply;
      try {
        reply = JSON.parse(line);
      } catch {
        continue;
      }
      const waiter = pending.get(reply.ack);
      if (waiter) {
        pending.delete(reply.ack);
        waiter(reply);
      }
    }
    if (pending.size === 0) socket.unref();
  });
}
