// Real HTTP/2 servers for the HTTP/2 tests: node:http2 on 127.0.0.1 port 0, cleartext (h2c) or TLS
// (h2) with a certificate for 127.0.0.1 from a CA of the test's own, each counting its streams.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface H2Server {
  url: string;
  /** The CA file a client trusts (TLS only). */
  caFile?: string;
  /** Streams the server has seen. */
  hits(): number;
  close(): Promise<void>;
}

/** The answers of the agent in fixtures/http2-agent.mjs. */
function answer(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: string): void {
  const p = String(headers[':path']);
  if (p === '/refuse') {
    stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    return;
  }
  if (p === '/events') {
    stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
    let n = 0;
    const next = () => {
      n++;
      if (n > 3) return stream.end();
      stream.write(`data: ${n}\n\n`, () => setImmediate(next));
    };
    next();
    return;
  }
  if (p === '/trailers') {
    stream.respond({ ':status': 200, 'content-type': 'application/json' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'c0ffee', 'x-count': '1' }));
    stream.end('{"ok":true}');
    return;
  }
  stream.respond({ ':status': p === '/unary?q=1' ? 201 : 200, 'content-type': 'application/json', 'x-reply': p });
  stream.end(JSON.stringify({ method: headers[':method'], path: p, body: body || null }));
}

/** A self-signed certificate for 127.0.0.1 (openssl), its key, and the file a client trusts (the certificate). */
function selfSigned(dir: string): { key: Buffer; cert: Buffer; caFile: string } {
  const base = path.join(dir, `h2-${process.pid}-${randomUUID()}`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      `${base}.key`,
      '-out',
      `${base}.pem`,
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(`${base}.key`), cert: readFileSync(`${base}.pem`), caFile: `${base}.pem` };
}

export async function startH2Server(options: { tls?: { dir: string } } = {}): Promise<H2Server> {
  let hits = 0;
  const tlsFiles = options.tls ? selfSigned(options.tls.dir) : undefined;
  const server = tlsFiles ? http2.createSecureServer(tlsFiles) : http2.createServer();
  server.on('stream', (stream, headers) => {
    hits++;
    const parts: Buffer[] = [];
    stream.on('data', (d: Buffer) => parts.push(d));
    stream.on('end', () => answer(stream, headers, Buffer.concat(parts).toString('utf8')));
    stream.on('error', () => undefined);
  });
  const sockets = new Set<net.Socket>();
  const listener: net.Server = server;
  listener.on(tlsFiles ? 'secureConnection' : 'connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as net.AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    ...(tlsFiles ? { caFile: tlsFiles.caFile } : {}),
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        listener.close(() => resolve());
      }),
  };
}

export interface GrpcServer {
  target: string;
  caFile?: string;
  hits(): number;
  close(): Promise<void>;
}

/** A real gRPC server (@grpc/grpc-js) of fixtures/orders.proto on 127.0.0.1 port 0, TLS or insecure. */
export async function startGrpcServer(options: { tls?: { dir: string } } = {}): Promise<GrpcServer> {
  const grpc = await import('@grpc/grpc-js');
  const protoLoader = await import('@grpc/proto-loader');
  const definition = protoLoader.loadSync(path.join(FIXTURES, 'orders.proto'), { longs: Number, defaults: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    orders: { Orders: { service: import('@grpc/grpc-js').ServiceDefinition } };
  };
  let hits = 0;
  type Req = { sku: string; count: number };
  const server = new grpc.Server();
  server.addService(loaded.orders.Orders.service, {
    Get(
      call: import('@grpc/grpc-js').ServerUnaryCall<Req, unknown>,
      callback: import('@grpc/grpc-js').sendUnaryData<unknown>,
    ) {
      hits++;
      if (call.request.sku === 'missing') {
        callback({ code: grpc.status.NOT_FOUND, details: `no order ${call.request.sku}` });
        return;
      }
      const header = new grpc.Metadata();
      header.set('x-served-by', `orders-${call.metadata.get('x-tenant')[0]}`);
      call.sendMetadata(header);
      callback(null, {
        sku: call.request.sku,
        seq: call.request.count,
        status: 'open',
        blob: Buffer.from([0, 255, 1, 128]),
      });
    },
    Watch(call: import('@grpc/grpc-js').ServerWritableStream<Req, unknown>) {
      hits++;
      for (let seq = 1; seq <= call.request.count; seq++)
        call.write({
          sku: call.request.sku,
          seq,
          status: seq === call.request.count ? 'done' : 'moving',
          blob: Buffer.from([seq, 0, 200]),
        });
      const trailer = new grpc.Metadata();
      trailer.set('x-total', String(call.request.count));
      call.end(trailer);
    },
  });
  const tlsFiles = options.tls ? selfSigned(options.tls.dir) : undefined;
  const credentials = tlsFiles
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: tlsFiles.key, cert_chain: tlsFiles.cert }])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (error, p) => (error ? reject(error) : resolve(p))),
  );
  return {
    target: `127.0.0.1:${port}`,
    ...(tlsFiles ? { caFile: tlsFiles.caFile } : {}),
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
