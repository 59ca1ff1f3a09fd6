import type { Socket } from 'node:net';

export interface PgReplyReader {
  readonly off: boolean;
  client(chunk: unknown): void;
  server(chunk: unknown): number[];
}
export interface DbReply {
  index: number;
  need: Record<string, number>;
}
/** What a connection's first write is, if Postgres (only its first 8 bytes count); undefined: not Postgres. */
export function pgFirstMessage(bytes: Uint8Array): 'startup' | 'encryption' | 'cancel' | undefined;
export function pgReplyReader(): PgReplyReader;
export function dbReplyEntry(connection: string, counts: Record<string, number>): string;
export function dbRepliesByConnection(values: unknown): { byConnection: Map<string, DbReply[]>; total: number };
export function watchPgConnections(ctx: {
  skip: () => boolean;
  connection: (name: string, socket: Socket, reader: PgReplyReader) => void;
  targets?: Record<string, string>;
}): () => void;
