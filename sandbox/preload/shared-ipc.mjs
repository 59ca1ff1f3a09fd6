// IPC client used inside the agent process: newline-delimited JSON to the parent over a
// Unix socket. Writes are synchronous on the socket's fd once connected, so an event handed
// to send() reaches the kernel before the agent can crash; replies ({"ack":n}) resolve sync().
import fs from 'node:fs';
import net from 'node:net';

/**
 * Connects to the parent's socket. Returns { send(obj), sync(obj): Promise<reply>, flush(), close() }.
 * The socket never keeps the agent alive unless a sync() is waiting for its reply.
 */
export function connectIpc(path) {
  const socket = net.createConnection(path);
  const queue = [];
  const pending = new Map();
  let fd = -1;
  let connected = false;
  let broken = false;
  let nextSync = 1;
  let input = '';

  socket.unref();
  socket.setNoDelay?.(true);
  socket.on('connect', () => {
    connected = true;
    const handle = socket._handle;
    fd = handle && typeof handle.fd === 'number' && handle.fd >= 0 ? handle.fd : -1;
    const lines = queue.splice(0);
    if (lines.length > 0) writeLine(lines.join(''));
  });
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

  function send(message) {
    const line = `${JSON.stringify(message)}\n`;
    if (connected) writeLine(line);
    else queue.push(line);
  }

  function sync(message) {
    if (broken) return Promise.resolve({ ack: -1 });
    const n = nextSync++;
    const reply = new Promise((resolve) => pending.set(n, resolve));
    socket.ref();
    send({ ...message, t: 'sync', n });
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
