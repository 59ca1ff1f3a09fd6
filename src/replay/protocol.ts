// The messages between the replay preload (sandbox/preload/replay.mjs) and the replay session,
// newline-delimited JSON over a Unix socket (src/replay/ipc.ts).
import type { StreamChunk } from '../recording/index.js';

/** A body on the wire: utf8 text or base64, with its size. */
export interface WireBody {
  size: number;
  text?: string;
  b64?: string;
}

/** A file the agent wrote (or removed) inside the sandboxed fs root, as the preload reports it. */
export interface FsReport {
  abs: string;
  mode?: number;
  b64?: string;
  gone?: boolean;
  dir?: boolean;
}

/** Clock, random and uuid values the preload handed to the agent since its last report. */
export type NdBatch = Partial<Record<'clock' | 'random' | 'uuid' | 'randomBytes', Array<number | string>>>;

/** A question or notice from the preload. */
export type PreloadMessage = Record<string, unknown>;

/** The session's answer to a question: a response, an error, a tool result, or stop. */
export interface Reply {
  stop?: boolean;
  /** World changes recorded for a served call, for the preload to apply to its fs volume. */
  effects?: FsReport[];
  error?: { code: string; message: string };
  status?: number;
  statusText?: string | undefined;
  headers?: Record<string, string>;
  body?: WireBody | undefined;
  chunks?: StreamChunk[];
  /** Keep a re-streamed response open (the agent aborts it), or until step `closeAfterStep` is served. */
  open?: boolean;
  closeAfterStep?: number;
  timing?: { kind: 'none' };
  /** The step the call was served as. */
  step?: number;
  /** An in-process tool's result. */
  result?: unknown;
  /** The index of the next recorded call the session expects (for the preload's fast path). */
  cursor?: number;
}

/** Bytes of a wire body (undefined when there is none). */
export function wireBytes(body: WireBody | undefined): Buffer | undefined {
  if (!body) return undefined;
  if (body.b64 !== undefined) return Buffer.from(body.b64, 'base64');
  return Buffer.from(body.text ?? '', 'utf8');
}

/** A wire body for bytes: utf8 text when they are text, else base64; undefined when empty. */
export function wireOf(bytes: Buffer | undefined): WireBody | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes)
    ? { size: bytes.length, text }
    : { size: bytes.length, b64: bytes.toString('base64') };
}
