// The recording thread's side (see session-thread.ts): one RecordSession and writer per open
// recording, fed the capture messages the request thread posts, in order.
import { parentPort } from 'node:worker_threads';
import { type ActiveRecording, openRecording, sharedRedactor } from './recorder.js';
import type { ThreadOp, ThreadReply } from './session-thread.js';

const port = parentPort;
if (port === null) throw new Error('session-worker.ts runs in a worker thread');

const recordings = new Map<number, ActiveRecording>();
/** Each recording's ops run in order (opening and closing take the disk). */
const chains = new Map<number, Promise<void>>();

function answer(reply: number, work: () => Promise<unknown>): Promise<void> {
  return work().then(
    (value) => port?.postMessage({ reply, ok: true, value } satisfies ThreadReply),
    (error: unknown) => {
      const e = error as { message?: string; code?: unknown; name?: string };
      port?.postMessage({
        reply,
        ok: false,
        error: {
          message: String(e?.message ?? error),
          ...(typeof e?.code === 'string' && e.name === 'TapedeckError' ? { code: e.code } : {}),
        },
      } satisfies ThreadReply);
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

port.on('message', (posted: ThreadOp | string) => {
  const ops: ThreadOp[] =
    typeof posted === 'string'
      ? (JSON.parse(posted) as Array<{ key: number; message: unknown }>).map((m) => ({ op: 'msg', ...m }))
      : [posted];
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
});
