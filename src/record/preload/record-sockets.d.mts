// Types of record-sockets.mjs for the TypeScript side (its tests).
import type { UnrecordedConnection } from '../../recording/types.js';

export type UnrecordedSocket = Omit<UnrecordedConnection, 'connections'>;
/** What a connection carries, from its first write (latin1); undefined: an HTTP/1 request, which the HTTP layers record. */
export declare function classifyFirstWrite(
  head: string,
  encrypted: boolean,
  target: string,
): Pick<UnrecordedSocket, 'kind' | 'target' | 'protocol'> | undefined;
export declare function watchSockets<R>(ctx: {
  current: () => R | undefined;
  suppressed: () => boolean;
  ignore: (target: string) => boolean;
  report: (run: R, socket: UnrecordedSocket) => void;
  /** node:http2's connections are recorded (record-http2.mjs): not reported. */
  http2?: boolean;
  websocket?: (socket: unknown, run: R, url: string, head: unknown, encoding: BufferEncoding | undefined) => unknown;
}): () => void;
