// Types of record-websocket.mjs for the TypeScript side (the recording proxy of record --isolate).
import type { MessageOf, WireBody, WireWsFrame } from '../protocol.js';

export interface WebSocketContext<R> {
  send(run: R, message: MessageOf<'ws'>): void;
  encode(run: R, bytes: Uint8Array | string): WireBody | undefined;
  nowMs(): number;
  drawn(run: R): WireWsFrame['drawn'];
  /** A connection followed no further (not frames, a message over the limit). */
  unrecorded(run: R, url: string): void;
  pid: number;
  /** What this side's ids start with. */
  origin: string;
}
/** Follows one WebSocket connection from its upgrade request; returns the chunk to write in its place. */
export declare function followWebSocket<R>(
  ctx: WebSocketContext<R>,
  socket: unknown,
  run: R,
  url: string,
  head: unknown,
  encoding: BufferEncoding | undefined,
): Uint8Array | string;
/** Writes the turns of connections still open: of one run, or (none given) all. */
export declare function flushWebSockets(run?: unknown): void;
