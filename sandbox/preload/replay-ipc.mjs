// The replay preload's IPC client: newline-delimited JSON to the replayer over a Unix socket.
// Unlike the recorder's client it writes through the socket (no synchronous fd writes): a replay
// asks and waits for every answer, so nothing is lost if the agent dies, and it is faster.
import net from 'node:net';

/** Connects to `path`. Returns { send(obj), sync(obj): Promise<reply> }; idle, it never keeps the agent alive. */
export function connectReplayIpc(path) {
  const socket = net.createConnection(path);
  const pending = new Map();
  let nextSync = 1;
  let input = '';
  let broken = false;
  socket.unref();
  socket.setNoDelay?.(true);
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
    for (const waiter of pending.values()) waiter({ ack: -1, error: { code: 'IPC_CLOSED', message: 'ipc closed' } });
    pending.clear();
  };
  socket.on('error', fail);
  socket.on('close', fail);

  return {
    send(message) {
      if (!broken) socket.write(`${JSON.stringify(message)}\n`);
    },
    sync(message) {
      if (broken) return Promise.resolve({ ack: -1 });
      const n = nextSync++;
      const reply = new Promise((resolve) => pending.set(n, resolve));
      socket.ref();
      socket.write(`${JSON.stringify({ ...message, t: 'sync', n })}\n`);
      return reply;
    },
  };
}
