// The replayer's end of the preload's IPC: newline-delimited JSON over a Unix socket.
// The preload sends {t:'sync', n, ...question} and expects {ack: n, ...reply} back; other
// messages are notices. Both are validated against the protocol (sandbox/protocol.ts): a
// question that does not fit is answered with an error (the agent never hangs), a notice that
// does not fit is dropped.
import net from 'node:net';
import { onLines } from '../../sandbox/ndjson.js';
import {
  type ReplayNotice,
  ReplayNoticeSchema,
  type ReplayQuestion,
  ReplayQuestionSchema,
  type ReplayReply,
} from '../../sandbox/protocol.js';

export interface IpcServer {
  readonly path: string;
  /**
   * Resolves when every connected client has closed (its last messages read), or when none has
   * sent anything for `idleMs` (a process that keeps its socket open and silent), or after `maxMs`
   * in all (a process left behind that keeps calling). A client still sending is waited for: a
   * replayer behind a fast agent reads its tail for seconds after it exits.
   */
  drained(idleMs: number, maxMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Listens on `path` (a Unix socket), or serves `path` when it is a listener already open (the OS
 * sandbox's loopback listener inside its namespace: Unix sockets are closed to the agent there).
 * `onQuestion` answers sync messages (in arrival order per connection, but
 * concurrently across requests); `onNotice` gets the rest.
 */
export async function listenIpc(
  path: string | net.Server,
  onQuestion: (question: ReplayQuestion) => Promise<ReplayReply>,
  onNotice: (notice: ReplayNotice) => void,
): Promise<IpcServer> {
  const sockets = new Set<net.Socket>();
  let onEmpty: (() => void) | undefined;
  let lastData = Date.now();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay?.(true);
    onLines(socket, (lines) => {
      lastData = Date.now();
      for (const line of lines) {
        let message: { t?: unknown; n?: unknown };
        try {
          message = JSON.parse(line) as { t?: unknown; n?: unknown };
        } catch {
          continue;
        }
        if (message === null || typeof message !== 'object') continue;
        if (message.t === 'sync' && typeof message.n === 'number') {
          const n = message.n;
          const question = ReplayQuestionSchema.safeParse(message);
          const answer = question.success
            ? onQuestion(question.data)
            : Promise.reject(new Error(`a question that does not fit the protocol: ${question.error.message}`));
          answer.then(
            (reply) => {
              if (!socket.destroyed) socket.write(`${JSON.stringify({ ...reply, ack: n })}\n`);
            },
            (error: unknown) => {
              const text = error instanceof Error ? error.message : String(error);
              if (!socket.destroyed) {
                socket.write(`${JSON.stringify({ ack: n, error: { code: 'REPLAY_ERROR', message: text } })}\n`);
              }
            },
          );
        } else {
          const notice = ReplayNoticeSchema.safeParse(message);
          if (notice.success) onNotice(notice.data);
        }
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) onEmpty?.();
    });
  });
  if (typeof path === 'string') {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } else path.on('connection', (socket: net.Socket) => server.emit('connection', socket));
  const listener = typeof path === 'string' ? undefined : path;
  return {
    path: typeof path === 'string' ? path : `tcp:127.0.0.1:${(path.address() as net.AddressInfo | null)?.port ?? 0}`,
    drained: (idleMs, maxMs = 60_000) =>
      new Promise<void>((resolve) => {
        if (sockets.size === 0) return resolve();
        const deadline = Date.now() + maxMs;
        let timer: NodeJS.Timeout;
        const idle = () => {
          const now = Date.now();
          const quiet = now - lastData;
          if (quiet >= idleMs || now >= deadline) resolve();
          else timer = setTimeout(idle, Math.min(idleMs - quiet, deadline - now));
        };
        timer = setTimeout(idle, Math.min(idleMs, maxMs));
        onEmpty = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        listener?.close();
        server.close(() => resolve());
      }),
  };
}
