// Without --isolate only Node processes' calls are recorded; a Python process's (a Python agent on
// `openai`/`requests`/`httpx`, a Python tool) are not. Such a run used to pass as complete with its
// calls missing ("recorded 1 steps"), and its replay could answer none of them. tapedeck's Python
// hook now names every TCP connection a Python process opens, with the package that opened it:
// in the manifest's `unrecorded` (kind `python`) and in `record`'s result, which the CLI warns
// with. The database given with --db is not named (the world capture records its effects), and
// under --isolate, where the recording proxy records them, nothing is.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording, unrecordedWarning } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

const PYTHON = '/usr/bin/python3';
const CI_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const BWRAP = detectIsolation().level === 'bwrap';
const PG_URL = process.env.TAPEDECK_PG_URL;

// Two calls of the agent's own (urllib), one by a package (a module under site-packages), and,
// with DB_PORT, a connection to the database.
const AGENT = `
import os, socket, urllib.request, fakeclient
url = os.environ["API_URL"]
for n in range(2):
    print(urllib.request.urlopen(url + "/own/%d" % n, timeout=10).read().decode())
print(fakeclient.get(url + "/package"))
if os.environ.get("DB_PORT"):
    socket.create_connection(("127.0.0.1", int(os.environ["DB_PORT"])), timeout=10).close()
`;
const PACKAGE = `
import urllib.request
def get(url):
    return urllib.request.urlopen(url, timeout=10).read().decode()
`;

describe.runIf(existsSync(PYTHON))("a Python process's connections", () => {
  const tmp = tempDir('tapedeck-python-connections-');
  let server: http.Server;
  let url = '';
  let hits = 0;
  const env: Record<string, string> = {};

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      res.end(`answer ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const packages = path.join(tmp.dir, 'lib', 'site-packages');
    mkdirSync(path.join(packages, 'fakeclient'), { recursive: true });
    writeFileSync(path.join(packages, 'fakeclient', '__init__.py'), PACKAGE);
    writeFileSync(path.join(tmp.dir, 'agent.py'), AGENT);
    Object.assign(env, { PATH: CI_PATH, PYTHONPATH: packages, API_URL: url });
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    tmp.remove();
  });

  async function recordAgent(name: string, options: { isolate?: boolean; db?: string; env?: Record<string, string> }) {
    let stdout = '';
    let stderr = '';
    const out = path.join(tmp.dir, name);
    const result = await recordCommand({
      command: [PYTHON, 'agent.py'],
      cwd: tmp.dir,
      env: { ...env, ...options.env },
      out,
      stdio: 'pipe',
      ...(options.isolate ? { isolate: true } : {}),
      ...(options.db ? { dbUrl: options.db } : {}),
      onSpawn: (child) => {
        child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      },
    });
    expect(result.exitCode, stderr).toBe(0);
    expect(stdout).toBe('answer /own/0\nanswer /own/1\nanswer /package\n');
    return { result, recording: await readRecording(out) };
  }

  it('without --isolate each is named, with the package that opened it, and record warns', async () => {
    const before = hits;
    const { result, recording } = await recordAgent('plain', {});
    expect(hits - before).toBe(3);
    const target = url.replace('http://', '');
    const expected = [
      { kind: 'python', target, connections: 2 },
      { kind: 'python', target, by: 'fakeclient', connections: 1 },
    ];
    expect(recording.manifest.unrecorded).toEqual(expected);
    expect(result.unrecorded).toEqual(expected);
    // Nothing of it is in the recording: no exchange a replay could answer.
    expect(recording.events.filter((e) => e.type === 'http.exchange')).toEqual([]);
    const warning = unrecordedWarning(expected[1] as (typeof expected)[number] & { kind: 'python' });
    expect(warning).toContain(`a connection a Python process opened to ${target} (opened by fakeclient)`);
    expect(warning).toContain('record with --isolate');
  });

  it.runIf(PG_URL)('the database given with --db is not named: the world capture records it', async () => {
    const db = new URL(PG_URL as string);
    const { recording } = await recordAgent('db', { db: PG_URL as string, env: { DB_PORT: db.port || '5432' } });
    expect(recording.manifest.unrecorded?.map((u) => u.target)).toEqual([
      url.replace('http://', ''),
      url.replace('http://', ''),
    ]);
  });

  it.runIf(BWRAP)('under --isolate nothing is named: the recording proxy records the calls', async () => {
    const { result, recording } = await recordAgent('isolated', { isolate: true });
    expect(recording.manifest.unrecorded).toBeUndefined();
    expect(result.unrecorded).toBeUndefined();
    expect(recording.events.filter((e) => e.type === 'http.exchange')).toHaveLength(3);
  });
});
