// Statement, portal and cursor names made each connection's own on the one backend: the names in
// extended-protocol messages (Parse, Bind, Describe, Close, Execute) are prefixed per connection,
// the unnamed statement is parsed again for the connection that binds it, and the names in an
// error the backend sends back read as the client wrote them.
import { cstrings, wireMessage } from '../../src/postgres/index.js';
import { cstringAt, typeOf } from './messages.js';
import { backendName, type Conn, prefixOf, type ServerState } from './state.js';

/**
 * The unnamed statement as this connection knows it: its own, parsed again when another
 * connection (or a hand-over) replaced it on the backend; never another connection's.
 */
function unnamedFor(state: ServerState, conn: Conn): string {
  if (state.unnamedOwner === conn.id) return '';
  if (!conn.unnamedParse) return '_td_no_unnamed_statement';
  conn.restoreUnnamed = true;
  state.unnamedOwner = conn.id;
  return '';
}

/** A client's extended-protocol message with its statement and portal names made its own. */
export function renamed(state: ServerState, conn: Conn, message: Buffer): Buffer {
  const type = typeOf(message);
  switch (type) {
    case 'P': {
      const [name, next] = cstringAt(message, 5);
      const parse = wireMessage('P', Buffer.concat([cstrings(backendName(conn, name)), message.subarray(next)]));
      if (name === '') {
        state.unnamedOwner = conn.id;
        conn.unnamedParse = message;
      } else conn.statements.set(backendName(conn, name), parse);
      return parse;
    }
    case 'B': {
      const [portal, next] = cstringAt(message, 5);
      const [statement, rest] = cstringAt(message, next);
      const target = statement === '' ? unnamedFor(state, conn) : backendName(conn, statement);
      return wireMessage('B', Buffer.concat([cstrings(backendName(conn, portal), target), message.subarray(rest)]));
    }
    case 'D':
    case 'C': {
      const kind = String.fromCharCode(message[5] as number);
      const [name] = cstringAt(message, 6);
      if (type === 'C' && kind === 'S') conn.statements.delete(backendName(conn, name));
      if (type === 'C' && kind === 'P') conn.heldCursors.delete(backendName(conn, name));
      const target = kind === 'S' && name === '' ? unnamedFor(state, conn) : backendName(conn, name);
      return wireMessage(type, Buffer.concat([Buffer.from(kind, 'latin1'), cstrings(target)]));
    }
    case 'E': {
      const [portal, next] = cstringAt(message, 5);
      return wireMessage('E', Buffer.concat([cstrings(backendName(conn, portal)), message.subarray(next)]));
    }
    default:
      return message;
  }
}

/** An ErrorResponse or NoticeResponse with the connection's prefix taken off the names it quotes. */
export function asWritten(conn: Conn, message: Buffer): Buffer {
  const prefix = `"${prefixOf(conn)}`;
  const body = message.subarray(5);
  if (!body.includes(prefix)) return message;
  return wireMessage(typeOf(message), Buffer.from(body.toString('utf8').replaceAll(prefix, '"'), 'utf8'));
}

/** Makes again the statements another connection's DEALLOCATE ALL or DISCARD ALL removed. */
export async function restoreStatements(conn: Conn, run: (message: Buffer) => Promise<Buffer>): Promise<void> {
  if (!conn.statementsLost) return;
  conn.statementsLost = false;
  const sync = wireMessage('S');
  for (const made of conn.statements.values()) {
    // One that no longer parses (its table dropped since) fails when used, as on a server.
    await run(typeof made === 'string' ? wireMessage('Q', cstrings(made)) : Buffer.concat([made, sync]));
  }
}
