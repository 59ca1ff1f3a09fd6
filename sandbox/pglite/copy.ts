// COPY … FROM STDIN on PGlite, which reads a COPY's data from the same call as the COPY and
// stops for good on running out: the data is gathered to its end first, then the whole runs at once.
import { cstrings, wireMessage } from '../../src/postgres/index.js';
import { messagesOf } from './messages.js';
import { type Conn, exec, type ServerState } from './state.js';

const PROBE = '_tapedeck_copy_probe';

/**
 * Starts gathering a COPY … FROM STDIN. Whether the COPY starts at all (its table, its columns)
 * is asked of the backend by starting it and failing it at once, inside a savepoint when in a
 * transaction: its CopyInResponse goes to the client, or, when it does not start, the COPY runs
 * for real and fails as it would have (it reads nothing before failing); that answer is returned.
 */
export async function startCopyIn(
  state: ServerState,
  conn: Conn,
  message: Buffer,
  send: (conn: Conn, data: Buffer) => void,
): Promise<Buffer | undefined> {
  if (conn.status === 'E') return exec(state, message);
  const inTransaction = conn.status === 'T';
  const probe = await exec(
    state,
    Buffer.concat([
      ...(inTransaction ? [wireMessage('Q', cstrings(`SAVEPOINT ${PROBE}`))] : []),
      message,
      wireMessage('f', cstrings('tapedeck: probe')),
      ...(inTransaction
        ? [wireMessage('Q', cstrings(`ROLLBACK TO SAVEPOINT ${PROBE}; RELEASE SAVEPOINT ${PROBE}`))]
        : []),
    ]),
  );
  const copyIn = messagesOf(probe).find((m) => m[0] === 'G'.charCodeAt(0));
  if (!copyIn) return exec(state, message);
  conn.copyIn = [message];
  conn.inCopy = true;
  send(conn, copyIn);
  return undefined;
}
