// Types of shared-websocket.mjs for the TypeScript side (the replay's answerer, tests).
export type WsMessageType = 'text' | 'binary' | 'close' | 'ping' | 'pong';
export interface WsMessage {
  type: WsMessageType;
  data: Buffer;
  code?: number;
  reason?: string;
}
export declare const MAX_MESSAGE: number;
/** A reader of one direction of a connection: feed() it bytes, it calls onMessage for each whole message. */
export declare function frameReader(
  onMessage: (message: WsMessage) => void,
  onError?: (reason: string) => void,
): { feed(chunk: Uint8Array): void };
/** One unmasked frame (a server's) carrying a whole message. */
export declare function serverFrame(type: WsMessageType, data: Uint8Array): Buffer;
/** A close frame's payload: its code and reason (none without a code). */
export declare function closePayload(code: number | undefined, reason?: string): Buffer;
/** The Sec-WebSocket-Accept answering a client's Sec-WebSocket-Key. */
export declare function acceptFor(key: string): string;
/** An HTTP/1 message head split at its blank line; undefined while it is not whole. */
export declare function splitHead(
  bytes: Buffer,
): { start: string; headers: Record<string, string>; rest: Buffer } | undefined;
