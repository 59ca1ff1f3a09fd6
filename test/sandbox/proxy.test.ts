// The sandbox proxy: curl, Python urllib and wget (each with only the run's CA trusted) reach
// ONE answer function through it, over plain HTTP, CONNECT+TLS and CONNECT+HTTP; streams arrive
// as they are produced; repeated headers stay apart; other protocols are refused and reported.
import { execFile, spawnSync } from 'node:child_process';
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
import { proxyEnv, type Trust } from '../../sandbox/proxy/trust.js';
import { realDir } from './helpers.js';

const run = promisify(execFile);
const hasPythonModule = (name: string) =>
  spawnSync('python3', ['-c', `import ${name}`], { stdio: 'ignore' }).status === 0;

describe('sandbox proxy', () => {
  let proxy: SandboxProxy;
  let env: Record<string, string>;
  let trust: Trust;
  let proxyUrl: string;
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
    trust = { caFile, wgetrc };
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
    proxyUrl = url;
    env = proxyEnv({ PATH: process.env.PATH ?? '', HOME: dir.dir }, url, trust);
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

  // A client that trusts only the bundle its own variable names (botocore: AWS_CA_BUNDLE, else
  // certifi's file) trusts the run's CA when the agent's env named another bundle: a corporate one
  // in AWS_CA_BUNDLE would otherwise be all boto3 trusts in the sandbox, and its HTTPS would fail.
  it.runIf(hasPythonModule('botocore'))(
    "reaches boto3/botocore's HTTPS through the proxy whatever bundle the agent's AWS_CA_BUNDLE named",
    async () => {
      const agentEnv = proxyEnv(
        { PATH: process.env.PATH ?? '', HOME: dir.dir, AWS_CA_BUNDLE: path.join(dir.dir, 'corporate-ca.pem') },
        proxyUrl,
        trust,
      );
      const script = [
        'import botocore.session',
        "client = botocore.session.get_session().create_client('sts', region_name='us-east-1', endpoint_url='https://sts.example.test/boto', aws_access_key_id='AKIDEXAMPLE', aws_secret_access_key='x')",
        'try:',
        '    client.get_caller_identity()',
        'except Exception as error:',
        '    print(type(error).__name__, str(error)[:200])',
      ].join('\n');
      const before = seen.length;
      const py = await run('python3', ['-c', script], { env: agentEnv });
      expect(
        seen.slice(before).map((r) => `${r.via} ${r.method} ${r.url}`),
        py.stdout,
      ).toEqual(['tunnel-tls POST https://sts.example.test/boto']);
    },
  );

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
