// The recording thread's side (see session-thread.ts): one RecordSession and writer per open
// recording, fed the capture messages the request thread posts, in order.
import { parentPort } from 'node:worker_threads';
import { blockOnDisk } from '../recording/index.js';
import { type ActiveRecording, openRecording, sharedRedactor } from './recorder.js';
import type { ThreadOp, ThreadReply } from './session-thread.js';

const port = parentPort;
if (port === null) throw new Error('session-worker.ts runs in a worker thread');
// This thread serves no one: its disk calls block it rather than go through libuv's pool.
blockOnDisk();

const recordings = new Map<number, ActiveRecording>();
/** Each recording's ops run in order (opening and closing take the disk). */
const chains = new Map<number, Promise<void>>();

/** Answers wait for the end of the thread's turn and cross together: each post wakes the request thread. */
let replies: ThreadReply[] = [];
function reply(answer: ThreadReply): void {
  if (replies.length === 0)
    setImmediate(() => {
      const all = replies;
      replies = [];
      port?.postMessage(all);
    });
  replies.push(answer);
}

function answer(id: number, work: () => Promise<unknown>): Promise<void> {
  return work().then(
    (value) => reply({ reply: id, ok: true, value }),
    (error: unknown) => {
      const e = error as { message?: string; code?: unknown; name?: string };
      reply({
        reply: id,
        ok: false,
        error: {
          message: String(e?.message ?? error),
          ...(typeof e?.code === 'string' && e.name === 'TapedeckError' ? { code: e.code } : {}),
        },
      });
    },
  );
}

function run(op: ThreadOp): Promise<void> | undefined {
  switch (op.op) {
    case 'open':
      return answer(op.reply, async () => {
        const redactor = sharedRedactor(op.options);
        const recording = await openRecording(
          { ...op.options, ...(redactor ? { redactor } : {}) },
          op.agent,
          op.runtime,
        );
        recording.writer.append({ type: 'run.started', stepId: 0, payload: op.started });
        recordings.set(op.key, recording);
      });
    case 'msg':
      recordings.get(op.key)?.session.accept(op.message);
      return undefined;
    case 'sync':
      return answer(
        op.reply,
        () =>
          new Promise((resolve) => {
            const recording = recordings.get(op.key);
            if (recording === undefined) resolve(undefined);
            else recording.session.accept(op.message, resolve);
          }),
      );
    case 'finish':
      return answer(op.reply, async () => {
        const recording = recordings.get(op.key);
        recordings.delete(op.key);
        if (recording === undefined) throw new Error('no such recording open');
        const dir = await recording.finish(op.outcome);
        return { dir, steps: recording.session.steps };
      });
    case 'discard':
      return answer(op.reply, async () => {
        const recording = recordings.get(op.key);
        recordings.delete(op.key);
        await recording?.discard();
      });
  }
}

/** One post of the request thread: its parts in order, each a JSON text of capture messages or an op. */
port.on('message', (parts: Array<string | ThreadOp>) => {
  for (const part of parts) {
    const ops: ThreadOp[] =
      typeof part === 'string'
        ? (JSON.parse(part) as Array<{ key: number; message: unknown }>).map((m) => ({ op: 'msg', ...m }))
        : [part];
    for (const op of ops) {
      // Messages join their recording's session queue at once; opening and closing wait their turn.
      if (op.op === 'msg' && !chains.has(op.key)) {
        run(op);
        continue;
      }
      const before = chains.get(op.key) ?? Promise.resolve();
      const next = before.then(() => run(op));
      const settled = next.finally(() => {
        if (chains.get(op.key) === settled) chains.delete(op.key);
      });
      chains.set(op.key, settled);
    }
  }
});
