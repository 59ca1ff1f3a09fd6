// The sandbox proxy: curl, Python urllib and wget (each with only the run's CA trusted) reach
// ONE answer function through it, over plain HTTP, CONNECT+TLS and CONNECT+HTTP; streams arrive
// as they are produced; repeated headers stay apart; other protocols are refused and reported.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunCa } from '../../sandbox/proxy/ca.js';
import {
  createSandboxProxy,
  type ProxyAttempt,
  type ProxyRequest,
  type SandboxProxy,
} from '../../sandbox/proxy/server.js';
import { realDir } from './helpers.js';

const run = promisify(execFile);

describe('sandbox proxy', () => {
  let proxy: SandboxProxy;
  let env: Record<string, string>;
  let dir: { dir: string; remove(): Promise<void> };
  const seen: ProxyRequest[] = [];
  const refused: ProxyAttempt[] = [];

  beforeAll(async () => {
    dir = await realDir('proxy-');
    const ca = await createRunCa();
    const caFile = path.join(dir.dir, 'ca.pem');
    await writeFile(caFile, ca.certPem);
    const wgetrc = path.join(dir.dir, 'wgetrc');
    await writeFile(wgetrc, `ca_certificate = ${caFile}\n`);
    proxy = createSandboxProxy({
      ca,
      answer: async (request) => {
        seen.push(request);
        if (request.url.endsWith('/stream')) {
          return {
            status: 200,
            headers: [['content-type', 'text/event-stream']],
            body: (async function* () {
              for (let i = 0; i < 3; i++) {
                yield `data: ${i}\n\n`;
                await new Promise((r) => setTimeout(r, 30));
              }
            })(),
          };
        }
        return {
          status: 201,
          headers: [
            ['set-cookie', 'a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT'],
            ['set-cookie', 'b=2'],
            ['set-cookie', 'c=3; Path=/'],
            ['content-type', 'text/plain'],
          ],
          body: `answered ${request.method} ${request.url} ${request.body.toString('utf8')}`,
        };
      },
      onRefused: (attempt) => refused.push(attempt),
    });
    const listener = net.createServer();
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    proxy.serve(listener);
    const url = `http://127.0.0.1:${(listener.address() as net.AddressInfo).port}`;
    env = {
      PATH: process.env.PATH ?? '',
      HOME: dir.dir,
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: '',
      no_proxy: '',
      SSL_CERT_FILE: caFile,
      CURL_CA_BUNDLE: caFile,
      REQUESTS_CA_BUNDLE: caFile,
      WGETRC: wgetrc,
    };
  });
  afterAll(async () => {
    await proxy?.close();
    await dir?.remove();
  });

  it('answers plain HTTP and HTTPS (TLS terminated with the run CA) from curl, Python and wget', async () => {
    const http = await run('curl', ['-s', '-X', 'POST', '-d', 'x=1', 'http://api.example.test/refunds?id=7'], { env });
    expect(http.stdout).toBe('answered POST http://api.example.test/refunds?id=7 x=1');
    const https = await run('curl', ['-s', 'https://api.example.test:8443/orders'], { env });
    expect(https.stdout).toBe('answered GET https://api.example.test:8443/orders ');
    const py = await run(
      'python3',
      ['-c', "import urllib.request; print(urllib.request.urlopen('https://api.example.test/py').read().decode())"],
      { env },
    );
    expect(py.stdout.trim()).toBe('answered GET https://api.example.test/py');
    const wget = await run('wget', ['-q', '-O', '-', 'https://api.example.test/wget'], { env });
    expect(wget.stdout).toBe('answered GET https://api.example.test/wget ');
    expect(seen.map((r) => r.via)).toEqual(['proxy', 'tunnel-tls', 'tunnel-tls', 'tunnel-tls']);
  });

  it('keeps three Set-Cookie headers apart', async () => {
    const r = await run('curl', ['-s', '-D', '-', '-o', '/dev/null', 'https://api.example.test/cookies'], { env });
    const cookies = r.stdout.split('\r\n').filter((l) => /^set-cookie:/i.test(l));
    expect(cookies).toEqual([
      'set-cookie: a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT',
      'set-cookie: b=2',
      'set-cookie: c=3; Path=/',
    ]);
  });

  it('streams an answer as it is produced', async () => {
    const r = await run('curl', ['-s', '-N', 'https://models.example.test/stream'], { env });
    expect(r.stdout).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
  });

  it('refuses a tunnel that is neither TLS nor HTTP, and WebSocket upgrades, and reports them', async () => {
    const port = Number(new URL(env.HTTP_PROXY as string).port);
    const socket = net.connect(port, '127.0.0.1');
    socket.write('CONNECT db.example.test:5432 HTTP/1.1\r\nhost: db.example.test:5432\r\n\r\n');
    await new Promise((r) => socket.once('data', r));
    socket.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]));
    await new Promise((r) => socket.once('close', r));
    await run(
      'curl',
      ['-s', '-H', 'Upgrade: websocket', '-H', 'Connection: Upgrade', 'http://ws.example.test/socket'],
      {
        env,
      },
    ).catch(() => undefined);
    expect(refused.map((a) => a.target)).toEqual(['db.example.test:5432', 'http://ws.example.test/socket']);
  });
});
