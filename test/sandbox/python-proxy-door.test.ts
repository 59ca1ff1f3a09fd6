// A Python client that does not take HTTP_PROXY (http.client, aiohttp's default, a raw asyncio
// stream) found nothing at its target in the OS sandbox, whose network is tapedeck's doors alone:
// under `record --isolate` its call failed where the run had made it, and so did its replay.
// tapedeck's Python hook now sends a TCP connection that no door serves through tapedeck's proxy,
// in a CONNECT tunnel to its target (sandbox/python/_tapedeck_connect.py), as the Node preload
// does (record-proxy-door.mjs): recorded for real, answered from the recording in a replay, never
// reaching the real service then. A port that listens inside (a server of the agent's own) is
// reached as is; a name the sandbox cannot resolve is tunnelled by its name.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { PYTHON_HOOK_DIR } from '../../sandbox/python/hook.js';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { tempDir } from '../record/helpers.js';

const PYTHON = '/usr/bin/python3';
const CI_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const BWRAP = detectIsolation().level === 'bwrap';
const AGENT = fileURLToPath(new URL('fixtures/py-direct-agent.py', import.meta.url));

/** A CONNECT proxy that opens every tunnel to a canned HTTP answer (or refuses), and keeps each CONNECT's head. */
async function tunnelProxy(refuse = false) {
  const heads: string[] = [];
  const server = net.createServer((socket) => {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      heads.push(head);
      if (refuse) {
        socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\ntunnel'));
    };
    socket.on('data', onData);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    heads,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Runs Python with the hook's connection module installed for `proxy`; what `code` prints (this process's servers answer meanwhile). */
function pythonWithDoor(proxy: string, code: string): Promise<{ stdout: string; stderr: string }> {
  const script = `import sys; sys.path.insert(0, ${JSON.stringify(PYTHON_HOOK_DIR)})\nimport _tapedeck_connect\n_tapedeck_connect.install(${JSON.stringify(proxy)})\n${code}`;
  return new Promise((resolve) => {
    execFile(
      PYTHON,
      ['-c', script],
      { encoding: 'utf8', timeout: 30_000, env: { PATH: CI_PATH } },
      (_e, stdout, stderr) => resolve({ stdout, stderr }),
    );
  });
}

const GET = (host: string, port: number) =>
  `import http.client\nc = http.client.HTTPConnection(${JSON.stringify(host)}, ${port}, timeout=10)\nc.request("GET", "/x")\nprint(c.getresponse().read().decode())`;

describe.runIf(existsSync(PYTHON))("the Python hook's proxy door", () => {
  it('a target nothing serves here goes through a CONNECT tunnel, with the asking process named', async () => {
    const proxy = await tunnelProxy();
    try {
      // A loopback port nothing listens on, and a name no resolver here knows.
      const closed = net.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as net.AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      for (const [host, authority] of [
        ['127.0.0.1', `127.0.0.1:${port}`],
        ['svc.tapedeck-test.invalid', 'svc.tapedeck-test.invalid:8080'],
      ] as const) {
        const run = await pythonWithDoor(proxy.url, GET(host, host === '127.0.0.1' ? port : 8080));
        expect(run.stderr).toBe('');
        expect(run.stdout).toBe('tunnel\n');
        const head = proxy.heads.at(-1) ?? '';
        expect(head.startsWith(`CONNECT ${authority} HTTP/1.1\r\n`)).toBe(true);
        expect(head).toMatch(/\r\nProxy-Authorization: Basic /);
      }
    } finally {
      await proxy.close();
    }
  });

  it('a port that listens here is reached as is; a refused tunnel is a refused connection', async () => {
    const proxy = await tunnelProxy(true);
    const own = http.createServer((_req, res) => res.end('direct'));
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    try {
      const port = (own.address() as net.AddressInfo).port;
      const direct = await pythonWithDoor(proxy.url, GET('127.0.0.1', port));
      expect(direct.stdout).toBe('direct\n');
      expect(proxy.heads).toEqual([]);
      const refused = await pythonWithDoor(
        proxy.url,
        `try:\n    ${GET('127.0.0.1', 9).split('\n').join('\n    ')}\nexcept ConnectionRefusedError as e:\n    print("refused", e.errno)`,
      );
      expect(refused.stdout).toBe('refused 111\n');
      expect(proxy.heads).toHaveLength(1);
    } finally {
      await proxy.close();
      await new Promise((resolve) => own.close(resolve));
    }
  });

  describe.runIf(BWRAP)('in the OS sandbox', () => {
    const tmp = tempDir('tapedeck-python-door-');
    let api: http.Server;
    let url = '';
    const hits: string[] = [];
    beforeAll(async () => {
      api = http.createServer((req, res) => {
        hits.push(String(req.url));
        res.end(`api ${req.url}`);
      });
      await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(api.address() as net.AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => api.close(resolve));
      tmp.remove();
    });

    it('clients that skip the proxy are recorded under --isolate and answered from the recording in a replay', {
      timeout: 240_000,
    }, async () => {
      let stdout = '';
      let stderr = '';
      const rec = path.join(tmp.dir, 'rec');
      const result = await recordCommand({
        command: [PYTHON, AGENT],
        env: { PATH: CI_PATH, API_URL: url },
        out: rec,
        stdio: 'pipe',
        isolate: true,
        onSpawn: (child) => {
          child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        },
      });
      expect(result.exitCode, stderr).toBe(0);
      const seen = JSON.parse(stdout) as Record<string, string>;
      expect(seen).toEqual({ async: 'api /async', direct: 'api /direct', own: 'own /inside', proxied: 'api /proxied' });
      expect([...hits].sort()).toEqual(['/async', '/direct', '/proxied']);
      const exchanges = readFileSync(path.join(rec, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"type":"http.exchange"'));
      expect(exchanges).toHaveLength(3);

      const replayed = await replay({
        recording: rec,
        mode: 'exact',
        out: path.join(tmp.dir, 'replay'),
        stdio: 'pipe',
        isolation: 'bwrap',
        env: { PATH: CI_PATH },
        timeoutMs: 120_000,
      });
      expect(replayed.output?.stderr ?? '').toBe('');
      expect(replayed.divergences).toEqual([]);
      expect(JSON.parse(replayed.output?.stdout ?? '{}')).toEqual(seen);
      // Nothing real was reached: the API saw the recording's three calls only.
      expect(hits).toHaveLength(3);
    });
  });
});
