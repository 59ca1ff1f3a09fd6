// The recording thread: in-process record() runs hand their capture messages to one worker
// thread per process (src/record/session-worker.ts), which decodes them into steps, redacts,
// serialises and writes the recordings (the same RecordSession and writer as everywhere else).
// The request thread only batches the messages of each turn of its event loop and posts them:
// decoding, redaction, canonical JSON and the disk are off its path (on a 2-core machine, on the
// other core), as OpenTelemetry's BatchSpanProcessor takes export off a request's path. Nothing
// unredacted reaches the disk: messages cross in memory and are redacted before the writer writes.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SHARE_ENV, Worker } from 'node:worker_threads';
import { packagePath } from '../package.js';
import { type Manifest, TapedeckError } from '../recording/index.js';
import type { FinishOutcome, RecordOptions } from './recorder.js';

/** What the request thread asks of the recording thread: each op is a post, but capture messages ('msg') go as one JSON text a turn. */
export type ThreadOp =
  | {
      op: 'open';
      key: number;
      reply: number;
      options: RecordOptions;
      agent: Manifest['agent'];
      runtime: Omit<Manifest['runtime'], 'node' | 'platform'>;
      started: { command: string[]; cwd: string; pid: number };
    }
  | { op: 'msg'; key: number; message: unknown }
  | { op: 'sync'; key: number; reply: number; message: unknown }
  | { op: 'finish'; key: number; reply: number; outcome: FinishOutcome }
  | { op: 'discard'; key: number; reply: number };

/** The recording thread's answer to an op that asked for one. */
export type ThreadReply =
  | { reply: number; ok: true; value?: unknown }
  | { reply: number; ok: false; error: { message: string; code?: string; name?: string } };

/** A recording whose session and writer live in the recording thread. */
export interface ThreadRecording {
  readonly id: string;
  readonly dir: string;
  /** A capture message, or a function that builds it (called when the turn's batch is posted). */
  send(message: unknown): void;
  sync(message: Record<string, unknown>): Promise<unknown>;
  /** Closes the recording; resolves with its folder and step count once every byte is written. */
  finish(outcome: FinishOutcome): Promise<{ dir: string; steps: number }>;
  discard(): Promise<void>;
}

let worker: Worker | undefined;
let nextKey = 1;
let nextReply = 1;
let open = 0;
const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
let batch: Queued[] = [];
let scheduled = false;

/**
 * The worker's entry: the built file when tapedeck runs from dist/ (the package), else the
 * TypeScript source beside this module, through tsx (a checkout: src/ does not ship).
 */
function workerEntry(): { entry: string; tsx: boolean } {
  const here = fileURLToPath(import.meta.url);
  if (!here.includes(`${path.sep}dist${path.sep}`))
    return { entry: pathToFileURL(path.join(path.dirname(here), 'session-worker.ts')).href, tsx: true };
  const built = packagePath('dist/session-worker.js');
  if (!existsSync(built))
    throw new TapedeckError(
      'BROKEN_INSTALL',
      `tapedeck: ${built} is missing (the recording thread); reinstall tapedeck`,
    );
  return { entry: pathToFileURL(built).href, tsx: false };
}

function thread(): Worker {
  if (worker !== undefined) return worker;
  const w = new Worker(packagePath('src/record/session-worker-boot.mjs'), {
    workerData: workerEntry(),
    env: SHARE_ENV,
  });
  w.on('message', (answers: ThreadReply[]) => {
    for (const answer of answers) {
      const wait = waiting.get(answer.reply);
      if (wait === undefined) continue;
      waiting.delete(answer.reply);
      if (answer.ok) wait.resolve(answer.value);
      else {
        const { message, code } = answer.error;
        wait.reject(code === undefined ? new Error(message) : new TapedeckError(code, message));
      }
    }
  });
  const fail = (error: unknown) => {
    worker = undefined;
    const lost = new Error(`tapedeck's recording thread stopped: ${(error as Error)?.message ?? error}`);
    for (const wait of waiting.values()) wait.reject(lost);
    waiting.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  worker = w;
  return w;
}

/**
 * Posts what is queued as one message (each post wakes the recording thread: a system call and,
 * on a busy machine, a context switch of the request thread): the capture messages as JSON texts
 * (one copy of one string is far cheaper than a structured clone of many objects), between them
 * the other ops as they are, all in order. The lazy messages are built now, after the agent's turn.
 */
function post(): void {
  scheduled = false;
  clearTimeout(timer);
  timer = undefined;
  const items = batch;
  batch = [];
  const parts: Array<string | Exclude<ThreadOp, { op: 'msg' }>> = [];
  let messages: Array<{ key: number; message: unknown }> = [];
  const addMessages = () => {
    if (messages.length === 0) return;
    parts.push(JSON.stringify(messages));
    messages = [];
  };
  for (const item of items) {
    if ('thunk' in item) {
      try {
        messages.push({ key: item.key, message: item.thunk() });
      } catch {
        // A message that cannot be built is dropped, as the session drops one it cannot read.
      }
    } else {
      addMessages();
      parts.push(item);
    }
  }
  addMessages();
  if (parts.length > 0) thread().postMessage(parts);
}

/**
 * What is queued waits up to BATCH_MS, so that a busy server posts a few batches a second rather
 * than several per session (each post costs both threads); an op someone waits on at once (an
 * open that must succeed before its run starts, a sync) goes at the end of the turn, with what is
 * queued. A finish waits in the batch too: its run has answered its request already. With 50
 * sessions on a 500 ms model, 3 ms gave 2.4 posts a session, 20 ms 0.8; a post held the request
 * thread ~0.3 ms (it wakes the recording thread, which on a busy 2-core machine takes the
 * request thread's core while it works the batch).
 */
const BATCH_MS = 20;
let timer: NodeJS.Timeout | undefined;

type Queued = Exclude<ThreadOp, { op: 'msg' }> | { thunk: () => unknown; key: number };

function enqueue(item: Queued, urgent: boolean): void {
  batch.push(item);
  if (scheduled) return;
  if (urgent) {
    scheduled = true;
    clearTimeout(timer);
    timer = undefined;
    setImmediate(post);
  } else timer ??= setTimeout(post, BATCH_MS);
}

function ask<T>(make: (reply: number) => Exclude<ThreadOp, { op: 'msg' }>, urgent: boolean): Promise<T> {
  const reply = nextReply++;
  return new Promise<T>((resolve, reject) => {
    waiting.set(reply, { resolve: resolve as (value: unknown) => void, reject });
    enqueue(make(reply), urgent);
  });
}

/** The thread keeps the process alive only while a recording is open in it. */
function hold(delta: number): void {
  open += delta;
  if (open > 0) thread().ref();
  else worker?.unref();
}

/**
 * Opens a recording in the recording thread: the folder, the first manifest and run.started are
 * written there. `options.out` must be set (the folder is chosen here). With `wait`, before this
 * resolves (an open that fails is this call's error); without, in the background: the thread
 * takes the recording's messages in order after its open, and an open that failed is the error
 * of its finish or discard. A server's request then never waits on the disk to start (the
 * folder, the manifest and events.jsonl were ~6 file operations on libuv's pool: tens of ms
 * with 50 sessions opening).
 */
export async function openThreadRecording(
  options: RecordOptions & { out: string },
  agent: Manifest['agent'],
  runtime: Omit<Manifest['runtime'], 'node' | 'platform'>,
  started: { command: string[]; cwd: string; pid: number },
  { wait }: { wait: boolean },
): Promise<ThreadRecording> {
  const key = nextKey++;
  hold(1);
  const opening = ask((reply) => ({ op: 'open', key, reply, options, agent, runtime, started }), wait);
  let openFailure: { error: unknown } | undefined;
  if (wait) {
    try {
      await opening;
    } catch (error) {
      hold(-1);
      throw error;
    }
  } else {
    opening.catch((error: unknown) => {
      openFailure = { error };
    });
  }
  const id = path.basename(options.out);
  let closed = false;
  const end = async <T>(make: (reply: number) => Exclude<ThreadOp, { op: 'msg' }>): Promise<T> => {
    if (closed) throw new Error(`recording ${id} is closed`);
    closed = true;
    try {
      return await ask<T>(make, false).catch((error: unknown) => {
        // The thread's "no such recording" after an open that failed: the open's error says why.
        throw openFailure ? openFailure.error : error;
      });
    } finally {
      hold(-1);
    }
  };
  return {
    id,
    dir: options.out,
    send: (message) => {
      if (closed) return;
      enqueue({ thunk: typeof message === 'function' ? (message as () => unknown) : () => message, key }, false);
    },
    sync: (message) => ask((reply) => ({ op: 'sync', key, reply, message }), true),
    finish: (outcome) => end((reply) => ({ op: 'finish', key, reply, outcome })),
    discard: () => end((reply) => ({ op: 'discard', key, reply })),
  };
}
