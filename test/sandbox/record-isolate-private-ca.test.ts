// record --isolate of services behind a private CA: the agent's HTTPS goes through the recording
// proxy, which makes each call itself — trusting what the agent trusts outside (the bundles its env
// names: NODE_EXTRA_CA_CERTS, SSL_CERT_FILE, …: agentTrust), so an internal API with a private
// CA's certificate is recorded under --isolate as it is without. Real HTTPS servers at 127.0.0.1
// and at a host name (this machine's own, resolved outside), each with a certificate from its own
// CA made here; the replay answers from the recording, the servers untouched. A client
// certificate (curl --cert) is the agent's alone: the proxy cannot present it, and says so.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { createRunCa } from '../../sandbox/proxy/ca.js';
import { agentTrust } from '../../sandbox/proxy/trust.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { ownNameService, realDir } from './helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'private-ca-agent.mjs');
const {
  name: NAME,
  address: resolved,
  missing,
} = await ownNameService(['curl', 'openssl', 'nsenter', 'unshare', 'ip'], detectIsolation().level);
if (missing.length > 0) console.warn(`record-isolate-private-ca.test.ts skipped: no ${missing.join(', ')}`);

interface Service {
  url: string;
  hits: () => number;
  /** Whether each request's connection presented a client certificate. */
  certs: boolean[];
  close(): Promise<void>;
}

/** An HTTPS server at `host` whose certificate (for `certFor`) a CA made here signs; its CA written to `caFile`. */
async function startService(input: {
  host: string;
  certFor: string;
  urlHost: string;
  caFile: string;
  requireClientCert?: boolean;
}): Promise<Service> {
  const ca = await createRunCa('private test CA');
  writeFileSync(input.caFile, ca.certPem);
  const secureContext = await ca.contextFor(input.certFor);
  let hits = 0;
  const certs: boolean[] = [];
  const server = http.createServer((req, res) => {
    hits++;
    const socket = req.socket as tls.TLSSocket;
    certs.push(Object.keys(socket.getPeerCertificate() ?? {}).length > 0);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, by: `real ${hits}` }));
  });
  const listener = net.createServer((raw) => {
    const socket = new tls.TLSSocket(raw, {
      isServer: true,
      secureContext,
      ...(input.requireClientCert ? { requestCert: true, rejectUnauthorized: false } : {}),
    });
    socket.on('error', () => raw.destroy());
    socket.on('secure', () => {
      // mTLS: a connection without a client certificate is cut off.
      if (input.requireClientCert && Object.keys(socket.getPeerCertificate() ?? {}).length === 0) socket.destroy();
      else server.emit('connection', socket);
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, input.host, resolve));
  return {
    url: `https://${input.urlHost}:${(listener.address() as net.AddressInfo).port}`,
    hits: () => hits,
    certs,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => listener.close(resolve));
    },
  };
}

describe('agentTrust: what the agent trusts outside the sandbox', () => {
  it('reads the certificates of every bundle variable and SSL_CERT_DIR, never a key', async () => {
    const dir = await realDir('agent-trust-');
    try {
      const a = await createRunCa('trust A');
      const b = await createRunCa('trust B');
      const c = await createRunCa('trust C');
      // A bundle that also holds a key (people concatenate): only the certificate is taken. The key
      // block is a placeholder made here, so no key-like text is kept in the repository.
      const marker = (edge: 'BEGIN' | 'END') => `-----${edge} ${['PRIVATE', 'KEY'].join(' ')}-----`;
      const key = `${marker('BEGIN')}\nAAAA\n${marker('END')}\n`;
      writeFileSync(path.join(dir.dir, 'a.pem'), key + a.certPem);
      execFileSync('mkdir', [path.join(dir.dir, 'certs')]);
      writeFileSync(path.join(dir.dir, 'certs', 'c.crt'), c.certPem);
      writeFileSync(path.join(dir.dir, 'b.pem'), b.certPem);
      const trusted = agentTrust({
        REQUESTS_CA_BUNDLE: path.join(dir.dir, 'a.pem'),
        CURL_CA_BUNDLE: path.join(dir.dir, 'b.pem'),
        SSL_CERT_DIR: `${path.join(dir.dir, 'nowhere')}:${path.join(dir.dir, 'certs')}`,
        NODE_EXTRA_CA_CERTS: path.join(dir.dir, 'missing.pem'),
      });
      expect(trusted?.slice(0, tls.rootCertificates.length)).toEqual([...tls.rootCertificates]);
      const extra = trusted?.slice(tls.rootCertificates.length).map((p) => `${p.trim()}\n`);
      expect(new Set(extra)).toEqual(new Set([a.certPem, b.certPem, c.certPem]));
      expect(trusted?.join('\n')).not.toContain('PRIVATE KEY');
      // Nothing named: Node's default roots, untouched.
      expect(agentTrust({ SSL_CERT_FILE: path.join(dir.dir, 'missing.pem') })).toBeUndefined();
    } finally {
      await dir.remove();
    }
  });
});

describe.runIf(missing.length === 0)('record --isolate of services behind a private CA', () => {
  let dir: { dir: string; remove(): Promise<void> };
  let atIp: Service;
  let atName: Service;
  let mtls: Service;
  const files = { ipCa: '', nameCa: '', mtlsCa: '', cert: '', key: '' };

  beforeAll(async () => {
    dir = await realDir('private-ca-');
    for (const name of ['ipCa', 'nameCa', 'mtlsCa'] as const) files[name] = path.join(dir.dir, `${name}.pem`);
    atIp = await startService({ host: '127.0.0.1', certFor: '127.0.0.1', urlHost: '127.0.0.1', caFile: files.ipCa });
    atName = await startService({ host: resolved as string, certFor: NAME, urlHost: NAME, caFile: files.nameCa });
    mtls = await startService({
      host: '127.0.0.1',
      certFor: '127.0.0.1',
      urlHost: '127.0.0.1',
      caFile: files.mtlsCa,
      requireClientCert: true,
    });
    // The agent's own client certificate (its key is the agent's file, as an agent's would be).
    files.cert = path.join(dir.dir, 'client.pem');
    files.key = path.join(dir.dir, 'client.key');
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
        ...['-keyout', files.key, '-out', files.cert, '-subj', '/CN=agent', '-days', '1'],
      ],
      { stdio: 'ignore' },
    );
  });
  afterAll(async () => {
    await Promise.all([atIp, atName, mtls].map((s) => s?.close()));
    await dir?.remove();
  });

  it('records Node fetch (NODE_EXTRA_CA_CERTS) and curl (SSL_CERT_FILE) to a private CA, replays from the recording', async () => {
    const out = path.join(dir.dir, 'recorded');
    let stdout = '';
    const recorded = await recordCommand({
      command: [process.execPath, AGENT],
      env: { IP_URL: atIp.url, NAME_URL: atName.url, NODE_EXTRA_CA_CERTS: files.ipCa, SSL_CERT_FILE: files.nameCa },
      out,
      isolate: true,
      stdio: 'pipe',
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString('utf8'))),
    });
    expect(recorded.exitCode).toBe(0);
    const run = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
    // Each reached its real service, verified against the agent's own CA.
    expect(JSON.parse(run.fetch), run.fetch).toEqual({ path: '/orders/7', by: 'real 1' });
    expect(JSON.parse(run.curl), run.curl).toEqual({ path: '/orders/8', by: 'real 1' });
    const rec = await readRecording(out);
    const urls = rec.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as { request: { url: string } }).request.url);
    expect(urls).toEqual([`${atIp.url}/orders/7`, `${atName.url}/orders/8`]);

    const before = [atIp.hits(), atName.hits()];
    const result = await replay({ recording: out, mode: 'exact', out: path.join(dir.dir, 'replayed'), stdio: 'pipe' });
    expect(result.isolation?.level, result.output?.stderr).toBe('bwrap');
    expect(JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '{}'), result.output?.stderr).toEqual(run);
    expect([atIp.hits(), atName.hits()]).toEqual(before);
    expect(result.divergences).toEqual([]);
  });

  it('a client certificate the agent presents (curl --cert) is refused with a one-line reason naming the host', async () => {
    const out = path.join(dir.dir, 'recorded-mtls');
    let stdout = '';
    const recorded = await recordCommand({
      command: [process.execPath, AGENT],
      env: {
        IP_URL: atIp.url,
        NAME_URL: atName.url,
        MTLS_URL: mtls.url,
        CLIENT_CERT: files.cert,
        CLIENT_KEY: files.key,
        NODE_EXTRA_CA_CERTS: files.ipCa,
        SSL_CERT_FILE: files.nameCa,
      },
      out,
      isolate: true,
      stdio: 'pipe',
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString('utf8'))),
    });
    const run = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
    // The agent is told why, in one line; the service was never called without the certificate.
    expect(run.mtls).toMatch(
      /^tapedeck: the agent presents a client certificate \(mTLS\) to 127\.0\.0\.1:\d+: .*cannot present it without the agent's key/,
    );
    expect(run.mtls.split('\n')).toHaveLength(1);
    expect(mtls.hits()).toBe(0);
    // And so is the recording: among the ways it could not record, naming the host.
    expect((recorded.sideChannels ?? []).filter((s) => /client certificate/.test(s))).toEqual([
      expect.stringMatching(/^the agent presents a client certificate \(mTLS\) to 127\.0\.0\.1:\d+: /),
    ]);
    const rec = await readRecording(out);
    const urls = rec.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as { request: { url: string } }).request.url);
    expect(urls.some((u) => u.startsWith(mtls.url))).toBe(false);
  });
});
