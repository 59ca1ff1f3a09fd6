// A replay says which of the packages that shape the agent's requests (its ORM, its database
// driver, its LLM SDK) it now loads at another version than recorded, in one warning line, in
// --json as `versionChanges`, and beside the divergences when it diverges: the link a user would
// otherwise have to guess. A real project folder: package.json versions under node_modules, bumped
// between the record and the replay.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';
import { tapedeck } from './run-cli.js';

const tmp = tempDir('tapedeck-replay-versions-');
const project = path.join(tmp.dir, 'orders-agent');
const agent = path.join(project, 'agent.mjs');

function install(name: string, version: string): void {
  const at = path.join(project, 'node_modules', name);
  mkdirSync(at, { recursive: true });
  writeFileSync(path.join(at, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }));
}

// The "ORM" builds its SQL by its version, as a real one's upgrade changes what it sends.
writeFileSync(
  path.join(tmp.dir, 'agent-source.mjs'),
  `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const orm = require('drizzle-orm/package.json').version;
const sql = orm.startsWith('0.44.') ? 'select "id" from "orders"' : 'select "orders"."id" from "orders"';
const res = await fetch(process.env.API_URL + '/query', { method: 'POST', body: JSON.stringify({ sql }) });
console.log(await res.text());
`,
);

let api: TestServer;
beforeAll(async () => {
  api = await startServer((_req, body, res) => {
    res.end(`ran ${JSON.parse(body).sql}`);
  });
  mkdirSync(project, { recursive: true });
  writeFileSync(agent, readFileSync(path.join(tmp.dir, 'agent-source.mjs')));
  install('drizzle-orm', '0.44.2');
  install('pg', '8.11.0');
  install('openai', '6.1.0');
  const recorded = await tapedeck(['record', '--out', path.join(tmp.dir, 'rec'), '--', process.execPath, agent], {
    cwd: tmp.dir,
    env: { API_URL: api.url },
  });
  expect(recorded.code, recorded.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await api?.close();
  tmp.remove();
});

const replayOf = (out: string, json: boolean) =>
  tapedeck(['replay', path.join(tmp.dir, 'rec'), '--out', path.join(tmp.dir, out), ...(json ? ['--json'] : [])], {
    cwd: tmp.dir,
    env: { API_URL: api.url },
    timeoutMs: 120_000,
  });

describe('tapedeck replay when the agent’s packages changed version', () => {
  it('records the driver, the ORM and the SDK the agent loads', () => {
    const manifest = JSON.parse(readFileSync(path.join(tmp.dir, 'rec', 'manifest.json'), 'utf8'));
    expect(manifest.runtime.sdkVersions).toEqual({ openai: '6.1.0', 'drizzle-orm': '0.44.2', pg: '8.11.0' });
  });

  it('says nothing when they are the recorded ones', { timeout: 180_000 }, async () => {
    const json = await replayOf('same-json', true);
    expect(json.code, json.stderr).toBe(0);
    const result = JSON.parse(json.stdout);
    expect(result.versionChanges).toBeUndefined();
    expect(JSON.stringify(result.warnings ?? [])).not.toMatch(/package versions/);
    const text = await replayOf('same-text', false);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout + text.stderr).not.toMatch(/package versions/);
  });

  it('names what changed in one line, in --json, and beside the divergence it caused', {
    timeout: 180_000,
  }, async () => {
    install('drizzle-orm', '0.45.4');
    install('pg', '8.16.0');
    rmSync(path.join(project, 'node_modules', 'openai'), { recursive: true });
    const line =
      'the agent loads other package versions than recorded (drizzle-orm 0.44.2 → 0.45.4, pg 8.11.0 → 8.16.0; openai no longer found)';

    const json = await replayOf('bumped-json', true);
    const result = JSON.parse(json.stdout);
    expect(result.divergences.length).toBeGreaterThan(0);
    expect(result.versionChanges).toEqual([
      { name: 'drizzle-orm', recorded: '0.44.2', now: '0.45.4' },
      { name: 'openai', recorded: '6.1.0', now: null },
      { name: 'pg', recorded: '8.11.0', now: '8.16.0' },
    ]);
    expect(result.warnings.filter((w: string) => w.startsWith(line))).toHaveLength(1);

    const text = await replayOf('bumped-text', false);
    expect(text.code).toBe(1);
    // Said before the agent runs, and again right under the divergences.
    expect(text.stderr).toContain(`tapedeck warning: ${line}`);
    const lines = text.stdout.split('\n');
    const divergences = lines.findIndex((l) => /divergence\(s\); first at step/.test(l));
    expect(divergences, text.stdout).toBeGreaterThanOrEqual(0);
    const next = lines.slice(divergences + 1).find((l) => !/^ {4}/.test(l));
    expect(next).toContain(`warning: ${line}`);
    expect(lines.filter((l) => l.includes(line))).toHaveLength(1);
  });
});
