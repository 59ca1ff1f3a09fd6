// record() inside a server process: the process's env secrets (of shapes no token pattern knows)
// and the values each run sends in secret-named headers are replaced wherever the runs quote them
// (a URL path, a request body, a response body, a tool()'s arguments and result), with many runs
// at once on the recording thread; no file of any recording holds their bytes.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { record, tool } from '../../src/record/index.js';
import { filesUnder } from '../support/files-under.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

const hex = (n: number) => randomBytes(n).toString('hex');
const ENV_SECRET = `acme_live_${hex(12)}`;
const DB_PASSWORD = `pw-${hex(6)}`;
// Set before the first record(): the process's redactor reads the env when it is made.
process.env.ACME_SERVICE_TOKEN = ENV_SECRET;
process.env.ORDERS_DATABASE_URL = `postgres://app:${DB_PASSWORD}@127.0.0.1:1/orders`;
const RUNS = 6;
const runSecrets = Array.from({ length: RUNS }, (_, i) => `run${i}-opaque-${hex(8)}`);

const tmp = tempDir('tapedeck-secret-values-in-process-');
let server: TestServer;
beforeAll(async () => {
  server = await startServer((req, body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: decodeURIComponent(req.url ?? ''), echo: body }));
  });
});
afterAll(async () => {
  await server.close();
  delete process.env.ACME_SERVICE_TOKEN;
  delete process.env.ORDERS_DATABASE_URL;
  tmp.remove();
});

it('keeps env secrets and header-named values out of every recording of concurrent runs', {
  timeout: 60_000,
}, async () => {
  const folder = path.join(tmp.dir, 'recordings');
  const lookup = tool('lookup', async (query: string) => ({ found: `row for ${query}` }));
  const results = await Promise.all(
    runSecrets.map((mine, i) =>
      record({ folder, name: `run-${i}` }, async () => {
        // A secret-named header: the run's own value, learned by the redactor when it is seen.
        await fetch(`${server.url}/auth`, { headers: { 'x-api-key': mine } });
        const answer = await fetch(`${server.url}/items/${ENV_SECRET}?run=${i}`, {
          method: 'POST',
          body: JSON.stringify({ note: `use ${ENV_SECRET} and ${mine}`, db: DB_PASSWORD }),
        }).then((r) => r.text());
        await lookup(`${ENV_SECRET} ${mine}`);
        return answer;
      }),
    ),
  );
  // The runs really sent and got back the secrets.
  for (const [i, r] of results.entries()) {
    expect(r.result).toContain(ENV_SECRET);
    expect(r.result).toContain(runSecrets[i]);
    expect(r.steps).toBeGreaterThanOrEqual(3);
  }
  const files = filesUnder(folder);
  expect(files.filter((f) => f.endsWith('events.jsonl'))).toHaveLength(RUNS);
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const secret of [ENV_SECRET, DB_PASSWORD, ...runSecrets])
      if (text.includes(secret)) found.push(`${file}: ${secret}`);
  }
  expect(found).toEqual([]);
});
