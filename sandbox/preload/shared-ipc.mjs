// IPC client used inside the agent process: newline-delimited JSON to the parent over a
// Unix socket. Writes are synchronous on the socket's fd once connected, so an event handed
// to send() reaches the kernel before the agent can crash; replies ({"ack":n}) resolve sync().
// With a spool folder, events are appended synchronously to this process's own file there
// instead (cheaper than a socket write, and no reader is woken per event); the socket then
// carries only sync() barriers, and the parent reads the spool up to the barrier first.
import fs from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

/**
 * Connects to the parent's socket. Returns { send(obj), sync(obj): Promise<reply>, close() }.
 * The socket never keeps the agent alive unless a sync() is waiting for its reply.
 */
export function connectIpc(path, options = {}) {
  let spool = -1;
  if (options.spoolDir) {
    try {
      spool = fs.openSync(join(options.spoolDir, `${process.pid}-${process.hrtime.bigint()}.ndjson`), 'a');
    } catch {
      spool = -1;
    }
  }
  const socket = net.createConnection(path);
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
    const handle = socket._handle;
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
        if (error && error.code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
          continue;
        }
        broken = true;
        return;
      }
    }
  }

  function toSocket(message) {
    const line = `${JSON.stringify(message)}\n`;
    if (connected) writeLine(line);
    else queue.push(line);
  }

  function send(message) {
    if (spool < 0) return toSocket(message);
    const line = `${JSON.stringify(message)}\n`;
    try {
      // A string goes to the kernel without an intermediate Buffer; a short write is finished bytewise.
      const written = fs.writeSync(spool, line);
      if (written < Buffer.byteLength(line)) {
        const bytes = Buffer.from(line, 'utf8');
        let offset = written;
        while (offset < bytes.length) offset += fs.writeSync(spool, bytes, offset, bytes.length - offset);
      }
    } catch {
      spool = -1;
    }
  }

  function sync(message) {
    if (broken) return Promise.resolve({ ack: -1 });
    const n = nextSync++;
    const reply = new Promise((resolve) => pending.set(n, resolve));
    socket.ref();
    toSocket({ ...message, t: 'sync', n });
    return reply;
  }

  return {
    send,
    sync,
    get connected() {
      return connected && !broken;
    },
    close() {
      socket.end();
    },
  };
}

/**
 * Resolves the waiter of each `{"ack": n}` reply line that arrives on the socket, and lets the
 * socket stop keeping the agent alive once no one waits. Shared by the record and replay clients.
 */
export function dispatchReplies(socket, pending) {
  let input = '';
  socket.on('data', (data) => {
    input += data.toString('utf8');
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
