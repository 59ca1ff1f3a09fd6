// The production-safe world mode (`world: 'observed'`, record() in-process) on a world of contrib
// extensions, domains, partitions and inheritance: the recording describes the extensions the
// database holds, and its replay in the PGlite sandbox reads what the recorded run read and ends at
// the recorded end state.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { runWorldAgent, WORLD } from './fixtures/extension-world.mjs';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/extension-world.mjs', import.meta.url));
const tmp = tempDir();
let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

beforeAll(async () => {
  if (ADMIN) source = await scratchDatabase(ADMIN, 'tdworlds_obs_', WORLD);
}, 120_000);

afterAll(async () => {
  await source?.drop();
  tmp.remove();
});

describe.runIf(ADMIN)('observed world capture of a world of extensions', () => {
  it('describes its extensions and replays to the recorded end state and the users the run left', async () => {
    const pool = new pg.Pool({ connectionString: source?.url, max: 2 });
    pool.on('error', () => {});
    const run = await record(
      { out: path.join(tmp.dir, 'rec'), name: 'extensions', command: [process.execPath, AGENT] },
      () => runWorldAgent(pool),
    );
    await pool.end();
    const recording = await readRecording(run.dir);
    expect(recording.manifest.world?.db).toMatchObject({ mode: 'observed', schemas: ['app'] });
    expect(recording.pre.db?.extensions?.map((e) => e.name)).toEqual(
      expect.arrayContaining(['citext', 'hstore', 'ltree', 'uuid-ossp']),
    );
    expect(recording.pre.db?.domains?.map((d) => d.name)).toEqual(['email', 'posint']);

    const replayed = await replay({
      recording: run.dir,
      mode: 'exact',
      out: path.join(tmp.dir, 'replay'),
      stdio: 'pipe',
    });
    expect(replayed.divergences).toEqual([]);
    expect(replayed.worldDiff).toEqual([]);
    // The users the run left (rows it wrote) read the same. Its aggregate and partial-column reads
    // are not followed in this mode (counted in world.db.unobserved), so the sandbox lacks rows
    // they saw: the snapshot mode test (extension-world-cli) holds those reads to the recorded ones.
    const printed = JSON.parse(replayed.output?.stdout ?? '{}') as typeof run.result;
    expect(printed.after).toEqual(JSON.parse(JSON.stringify(run.result.after)));
    expect(Object.values(recording.manifest.world?.db?.unobserved ?? {}).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(replayed.warnings?.join('\n') ?? '').not.toMatch(/lacks extension/);
  }, 240_000);
});
