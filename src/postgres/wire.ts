// The few pieces of the Postgres wire protocol (v3) that tapedeck's own servers speak: the codes
// of the untyped first messages, startup parameters, and building typed messages (ErrorResponse,
// ParameterStatus…), and listening on loopback. The gate, and the server that shares one PGlite
// among connections, use them.
import type net from 'node:net';

export const SSL_REQUEST = 80877103;
export const GSS_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;
export const PROTOCOL_3 = 196608;
/** A startup message is small; anything larger is not Postgres. */
export const MAX_STARTUP = 10_000;

/** A typed backend message: one type byte, its length, the body. */
export function wireMessage(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** Null-terminated strings, as message bodies carry them. */
export function cstrings(...values: string[]): Buffer {
  return Buffer.from(values.map((v) => `${v}\0`).join(''), 'utf8');
}

/** An ErrorResponse a client library shows as a normal error (FATAL ones end the connection). */
export function errorResponse(code: string, message: string, severity: 'ERROR' | 'FATAL' = 'FATAL'): Buffer {
  return wireMessage(
    'E',
    Buffer.concat([cstrings(`S${severity}`, `V${severity}`, `C${code}`, `M${message}`), Buffer.from([0])]),
  );
}

/** The key/value pairs of a startup message's body (after length and protocol code). */
export function parseParams(body: Buffer): Map<string, string> | undefined {
  const params = new Map<string, string>();
  let at = 0;
  for (;;) {
    const keyEnd = body.indexOf(0, at);
    if (keyEnd < 0) return undefined;
    if (keyEnd === at) return at === body.length - 1 ? params : undefined;
    const valueEnd = body.indexOf(0, keyEnd + 1);
    if (valueEnd < 0) return undefined;
    params.set(body.toString('utf8', at, keyEnd), body.toString('utf8', keyEnd + 1, valueEnd));
    at = valueEnd + 1;
  }
}

/** Listens on 127.0.0.1 at an ephemeral port; resolves to the port. */
export async function listenOnLoopback(server: net.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as net.AddressInfo).port;
}
