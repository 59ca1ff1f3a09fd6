// Reading and building the wire messages the PGlite server passes between its clients and the
// one backend: splitting the backend's output, the SQL a Query or Parse carries, and a statement
// that fails in the backend itself with a tapedeck error.
import { cstrings, wireMessage } from '../../src/postgres/index.js';

export type TxStatus = 'I' | 'T' | 'E';

export const typeOf = (message: Buffer): string => String.fromCharCode(message[0] as number);

/** A ReadyForQuery with `status`. */
export const readyFor = (status: TxStatus): Buffer => wireMessage('Z', Buffer.from(status, 'latin1'));

/** The messages of a backend's output. */
export function messagesOf(output: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  for (let at = 0; at + 5 <= output.length; ) {
    const end = at + 1 + output.readInt32BE(at + 1);
    messages.push(output.subarray(at, end));
    at = end;
  }
  return messages;
}

/** A cstring at `at`: its text and the offset after its terminator. */
export function cstringAt(body: Buffer, at: number): [string, number] {
  const end = body.indexOf(0, at);
  const stop = end < 0 ? body.length : end;
  return [body.toString('utf8', at, stop), stop + 1];
}

/** The SQL text of a Query or Parse message, else undefined. */
export function sqlOf(message: Buffer): string | undefined {
  const type = typeOf(message);
  if (type === 'Q') return cstringAt(message, 5)[0];
  if (type === 'P') return cstringAt(message, cstringAt(message, 5)[1])[0];
  return undefined;
}

/** The Query or Parse message with `sql` in place of its text. */
export function withSql(message: Buffer, sql: string): Buffer {
  if (typeOf(message) === 'Q') return wireMessage('Q', cstrings(sql));
  const [name, afterName] = cstringAt(message, 5);
  const [, afterSql] = cstringAt(message, afterName);
  return wireMessage('P', Buffer.concat([cstrings(name, sql), message.subarray(afterSql)]));
}

/** A statement that fails with `message` in the backend itself, so every protocol state (transaction, extended cycle) moves as for any error. */
export function failingSql(code: string, message: string): string {
  return `DO $tapedeck$BEGIN RAISE EXCEPTION USING ERRCODE = '${code}', MESSAGE = ${`'${message.replaceAll("'", "''")}'`}; END$tapedeck$`;
}

const TEXT_OID = 25;

/**
 * The message, its SQL replaced by one that fails with a tapedeck error when run. A Parse keeps
 * as many parameters as the client will bind (its declared types, or text for those it left to
 * the server), so its Bind is taken and the error is the tapedeck one.
 */
export function refusedIn(message: Buffer, code: string, text: string): Buffer {
  const failing = failingSql(code, text);
  if (typeOf(message) !== 'P') return withSql(message, failing);
  const [name, afterName] = cstringAt(message, 5);
  const [sql, afterSql] = cstringAt(message, afterName);
  const declared = message.readInt16BE(afterSql);
  let count = declared;
  for (const match of sql.matchAll(/\$([0-9]{1,5})/g)) count = Math.max(count, Number(match[1]));
  const types = Buffer.alloc(2 + 4 * count);
  types.writeInt16BE(count, 0);
  for (let i = 0; i < count; i++) {
    const oid = i < declared ? message.readUInt32BE(afterSql + 2 + 4 * i) : 0;
    types.writeUInt32BE(oid === 0 ? TEXT_OID : oid, 2 + 4 * i);
  }
  return wireMessage('P', Buffer.concat([cstrings(name, failing), types]));
}
