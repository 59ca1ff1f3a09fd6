// A real `tapedeck record --db` of an agent working on a world of contrib extensions (citext,
// hstore, ltree, cube, pg_trgm, uuid-ossp, pgcrypto, earthdistance, btree_gist), domains,
// partitions and inheritance, then `tapedeck replay` of it in the default PGlite sandbox and in a
// template database on the server: the replayed agent reads what the recorded one read, and the end
// state equals the recorded one. And the one line a replay says when the recorded description
// names an extension the sandbox cannot create.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tapedeck } from '../cli/run-cli.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { WORLD } from './fixtures/extension-world.mjs';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/extension-world.mjs', import.meta.url));
const tmp = tempDir();
let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
let env: NodeJS.ProcessEnv;
const recordingDir = path.join(tmp.dir, 'rec');

beforeAll(async () => {
  if (!ADMIN) return;
  source = await scratchDatabase(ADMIN, 'tdworlds_cli_', WORLD);
  env = { TAPEDECK_STATE_DIR: path.join(tmp.dir, 'state'), DATABASE_URL: source.url };
}, 120_000);

afterAll(async () => {
  await source?.drop();
  tmp.remove();
});

/** The agent's printed line: what it read before its writes, and the users it left. */
const printed = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('{"read"')) ?? '';

describe.runIf(ADMIN)('record --db and replay of a world of extensions', () => {
  let recorded = '';

  it('records the run', async () => {
    const run = await tapedeck(
      [
        'record',
        '--db',
        source?.url as string,
        '--db-schema',
        'app',
        '--out',
        recordingDir,
        '--',
        process.execPath,
        AGENT,
      ],
      { env, timeoutMs: 180_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    recorded = printed(run.stdout);
    expect(JSON.parse(recorded).read).toHaveLength(13);
    const pre = JSON.parse(readFileSync(path.join(recordingDir, 'snapshots/pre/db.json'), 'utf8'));
    expect(pre.extensions.map((e: { name: string }) => e.name)).toEqual(
      expect.arrayContaining(['citext', 'hstore', 'ltree', 'uuid-ossp', 'earthdistance']),
    );
  }, 240_000);

  it.each([
    ['the PGlite sandbox', [] as string[]],
    ['a template database on the server', ['--db', ADMIN ?? '']],
  ])(
    'replays it in %s: the same reads and the recorded end state',
    async (_name, extra) => {
      const run = await tapedeck(
        ['replay', recordingDir, '--out', path.join(tmp.dir, `replay-${extra.length}`), ...extra],
        {
          env,
          timeoutMs: 180_000,
        },
      );
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(printed(run.stdout)).toBe(recorded);
      expect(run.stdout).toContain('end state equals the recorded end state');
      expect(run.stdout).not.toMatch(/the sandbox database lacks extension/);
    },
    240_000,
  );

  it('says in one line what the sandbox lacks when the description names an extension it cannot create', async () => {
    const file = path.join(recordingDir, 'snapshots/pre/db.json');
    const db = JSON.parse(readFileSync(file, 'utf8'));
    db.extensions.push({ name: 'postgis', schema: 'public' });
    writeFileSync(file, JSON.stringify(db));
    // An edited recording: its command is no longer this machine's sealed one, so it is given again.
    const run = await tapedeck(
      ['replay', recordingDir, '--out', path.join(tmp.dir, 'replay-lacking'), '--', process.execPath, AGENT],
      { env, timeoutMs: 180_000 },
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const lines = `${run.stdout}\n${run.stderr}`.split('\n').filter((l) => l.includes('lacks extension'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/extension postgis \(not one a sandbox creates/);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/\n\s+at /);
    expect(printed(run.stdout)).toBe(recorded);
  }, 240_000);
});
