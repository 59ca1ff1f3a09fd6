import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { openNamedDoors } from '../../sandbox/os/doors.js';
import { openOsSandbox } from '../../sandbox/os/sandbox.js';
import { createRunCa } from '../../sandbox/proxy/ca.js';
import { createSandboxProxy } from '../../sandbox/proxy/server.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { ownNameService, realDir } from './helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'named-service-agent.mjs');
const {
  name: NAME,
  address: resolved,
  missing,
} = await ownNameService(['curl', 'python3', 'nsenter', 'unshare', 'ip'], detectIsolation().level);
if (missing.length > 0) console.warn(`named-service.test.ts skipped: no ${missing.join(', ')}`);

describe.runIf(missing.length === 0)('a recorded service reached by its host name without the proxy', () => {
  let dir: { dir: string; remove(): Promise<void> };
  let server: http.Server;
  let hits = 0;
  let serviceUrl: string;

  beforeAll(async () => {
    dir = await realDir('named-service-');
    server = http.createServer((req, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url, host: req.headers.host, by: `real ${hits}` }));
    });
    await new Promise<void>((resolve) => server.listen(0, resolved as string, resolve));
    serviceUrl = `http://${NAME}:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await dir?.remove();
  });

  it('recorded with --isolate (curl and python at the name are recorded), replayed from the recording', async () => {
    const out = path.join(dir.dir, 'recorded');
    let stdout = '';
    const recorded = await recordCommand({
      command: [process.execPath, AGENT],
      env: { SERVICE_URL: serviceUrl },
      out,
      isolate: true,
      stdio: 'pipe',
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString('utf8'))),
    });
    expect(recorded.exitCode).toBe(0);
    const run = JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
    // The real run reached the real service by its name, from inside the recording's sandbox.
    expect(JSON.parse(run.curl)).toEqual({ path: '/orders/7', host: serviceUrl.slice(7), by: 'real 1' });
    expect(JSON.parse(run.python)).toEqual({ path: '/orders/8', host: serviceUrl.slice(7), by: 'real 2' });
    // No way out refused: glibc's own probe of a name-service cache (nscd) as curl resolves the
    // name (a Unix socket refused at creation inside, reached by no one) is said as that probe.
    expect((recorded.sideChannels ?? []).filter((s) => !/name-service \(nscd\) probe/.test(s))).toEqual([]);
    const rec = await readRecording(out);
    const urls = rec.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as { request: { url: string } }).request.url);
    expect(urls).toEqual([`${serviceUrl}/orders/7`, `${serviceUrl}/orders/8`]);

    const before = hits;
    const result = await replay({ recording: out, mode: 'exact', out: path.join(dir.dir, 'replayed'), stdio: 'pipe' });
    expect(result.isolation?.level, result.output?.stderr).toBe('bwrap');
    const again = JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '{}');
    // The recorded answers, at the name, and the real service never reached.
    expect(again, result.output?.stderr).toEqual(run);
    expect(hits).toBe(before);
    // Nothing diverged: the same nscd probe of curl's is a warning, not a way out.
    expect(result.divergences).toEqual([]);
    expect((result.warnings ?? []).join('\n')).toMatch(/glibc's name-service \(nscd\) probe.*curl/);
    expect((result.warnings ?? []).join('\n')).not.toMatch(/host names/);
  });

  it('https at a name on port 443: a certificate for the name, trusted inside, for curl and python', async () => {
    const ca = await createRunCa();
    const box = await openOsSandbox({ isolation: detectIsolation(), cwd: dir.dir, caPem: ca.certPem });
    const proxy = createSandboxProxy({
      ca,
      answer: async (request) => ({
        status: 200,
        headers: [['content-type', 'text/plain']],
        body: `answered ${request.method} ${request.url}`,
      }),
    });
    try {
      const doors = await openNamedDoors(
        box,
        ['https://billing.svc.cluster.local/v1/charges', 'http://api.internal:8080/x', 'https://api.internal/y'],
        (listener, target) => proxy.serveAs(listener, target),
      );
      expect(doors.unserved).toEqual([]);
      // Two names, each its own address: api.internal's ports 8080 and 443 share one.
      expect(new Set(doors.addresses).size).toBe(2);
      const script = [
        'curl -sS --max-time 20 https://billing.svc.cluster.local/v1/charges; echo',
        'curl -sS --max-time 20 http://api.internal:8080/x; echo',
        `python3 -c 'import urllib.request as u; print(u.build_opener(u.ProxyHandler({})).open("https://api.internal/y", timeout=20).read().decode())'`,
      ].join('\n');
      const proc = box.spawn(['sh', '-c', script], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        stdio: 'pipe',
      });
      let output = '';
      proc.on('stdout', (d: Buffer) => (output += d.toString('utf8')));
      proc.on('stderr', (d: Buffer) => (output += d.toString('utf8')));
      const exit = await proc.exit;
      expect(output.trim().split('\n'), output).toEqual([
        'answered GET https://billing.svc.cluster.local/v1/charges',
        'answered GET http://api.internal:8080/x',
        'answered GET https://api.internal/y',
      ]);
      expect(exit.code).toBe(0);
    } finally {
      await proxy.close();
      await box.close();
    }
  });
});
