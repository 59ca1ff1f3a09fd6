// Every run CA is one OpenSSL reads: Node loads it through NODE_EXTRA_CA_CERTS and says "Ignoring
// extra certs … illegal padding" on the agent's stderr when its DER is not minimal (a serial
// number starting with a zero byte did that to 1 CA in 128).
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, TLSSocket, connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { createRunCa, type RunCa } from './ca.js';

describe('run CA', () => {
  it('is readable by OpenSSL every time (600 CAs)', async () => {
    for (let i = 0; i < 600; i++) {
      const ca = await createRunCa();
      const serial = new X509Certificate(ca.certPem).serialNumber;
      expect(serial.length, serial).toBe(32);
      expect(Number.parseInt(serial.slice(0, 2), 16)).toBeGreaterThanOrEqual(0x40);
      expect(() => createSecureContext({ ca: ca.certPem })).not.toThrow();
    }
  }, 170_000);
});

// Strict verifiers want each certificate's key identifiers (RFC 5280 §4.2.1.1-2): OpenSSL's
// X509_STRICT, which Python 3.13 turns on in ssl.create_default_context() (httpx, and so the OpenAI
// and Anthropic Python SDKs): without them an agent's HTTPS call inside the sandbox fails with
// "Missing Authority Key Identifier". A real handshake, a Node TLS server presenting the run CA's
// certificate for each kind of host to Python with the flag set, and OpenSSL's own strict check.
describe('run CA under strict X.509 verification', () => {
  const has = (tool: string, ...args: string[]) => spawnSync(tool, args, { encoding: 'utf8' }).status === 0;
  const hosts = ['api.openai.com', 'localhost', '127.0.0.1', '::1'];

  /** A TLS server on loopback presenting the run CA's certificate for `host`, for one check. */
  async function withServer<T>(ca: RunCa, host: string, check: (port: number) => Promise<T>): Promise<T> {
    const context = await ca.contextFor(host);
    const server = net.createServer((raw) => {
      const socket = new TLSSocket(raw, { isServer: true, secureContext: context });
      socket.on('error', () => undefined);
      socket.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      return await check((server.address() as net.AddressInfo).port);
    } finally {
      server.close();
    }
  }

  async function inDir(use: (dir: string) => Promise<void>): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ca-'));
    try {
      await use(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it.runIf(has('python3', '--version'))(
    'its host certificates complete a TLS handshake with Python under VERIFY_X509_STRICT',
    async () => {
      const ca = await createRunCa();
      await inDir(async (dir) => {
        writeFileSync(join(dir, 'ca.pem'), ca.certPem);
        for (const host of hosts) {
          const run = await withServer(ca, host, (port) => {
            const script = [
              'import socket, ssl, sys',
              `ctx = ssl.create_default_context(cafile=${JSON.stringify(join(dir, 'ca.pem'))})`,
              'ctx.verify_flags |= ssl.VERIFY_X509_STRICT',
              `with socket.create_connection(('127.0.0.1', ${port})) as raw:`,
              `    with ctx.wrap_socket(raw, server_hostname=${JSON.stringify(host)}) as tls:`,
              '        sys.stdout.write(tls.recv(10).decode())',
            ].join('\n');
            return new Promise<{ status: number | null; out: string }>((resolve) => {
              const child = spawn('python3', ['-c', script]);
              let out = '';
              child.stdout.on('data', (d) => (out += d));
              child.stderr.on('data', (d) => (out += d));
              child.on('close', (status) => resolve({ status, out }));
            });
          });
          expect(run, host).toEqual({ status: 0, out: 'ok' });
        }
      });
    },
    60_000,
  );

  it.runIf(has('openssl', 'version'))(
    'its CA and host certificates pass `openssl verify -x509_strict`',
    async () => {
      const ca = await createRunCa();
      await inDir(async (dir) => {
        writeFileSync(join(dir, 'ca.pem'), ca.certPem);
        for (const host of hosts) {
          const leaf = await withServer(
            ca,
            host,
            (port) =>
              new Promise<string>((resolve, reject) => {
                const client = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => {
                  resolve(new X509Certificate(client.getPeerCertificate().raw).toString());
                  client.destroy();
                });
                client.on('error', reject);
              }),
          );
          writeFileSync(join(dir, 'leaf.pem'), leaf);
          const run = spawnSync(
            'openssl',
            ['verify', '-x509_strict', '-CAfile', join(dir, 'ca.pem'), join(dir, 'leaf.pem')],
            {
              encoding: 'utf8',
            },
          );
          expect(`${run.stdout}${run.stderr}`.trim(), host).toBe(`${join(dir, 'leaf.pem')}: OK`);
        }
      });
    },
    60_000,
  );
});
