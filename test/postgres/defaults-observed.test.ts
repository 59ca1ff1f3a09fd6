// What a run's inserts lean on in the schema, captured by the observed world and rebuilt as data in
// the replay's sandbox: an enum, a domain, an explicit sequence behind a default, a stored generated
// column, an interval constant, and clocks plus or minus an interval (`now() + interval '14 days'`,
// the expiry pg-boss's job table has). Inserts omitting every defaulted column replay exactly; a
// default the description could not hold would be NULL there (a NOT NULL column refuses the insert).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { runDefaultsAgent, WORLD } from './fixtures/defaults-world.mjs';
import { itReplaysExactly } from './replay-exact.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/defaults-world.mjs', import.meta.url));
const tmp = tempDir();
afterAll(() => tmp.remove());

describe.runIf(ADMIN)('observed world: the defaults, types and sequences a run’s inserts lean on', () => {
  let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let dir = '';
  let result: unknown;
  beforeAll(async () => {
    source = await scratchDatabase(ADMIN as string, 'worlds_defaults_', WORLD);
    const run = await record(
      { out: path.join(tmp.dir, 'rec'), name: 'defaults', command: [process.execPath, AGENT] },
      () => runDefaultsAgent(source?.url as string),
    );
    dir = run.dir;
    result = run.result;
  }, 240_000);
  afterAll(async () => source?.drop());

  it('describes every default as data: nothing left unbuilt', async () => {
    const recording = await readRecording(dir);
    expect(recording.pre.db?.unbuilt ?? []).toEqual([]);
    const job = recording.pre.db?.tables.find((t) => t.name === 'job');
    const defaults = Object.fromEntries((job?.columns ?? []).map((c) => [c.name, c.default]));
    expect(defaults).toMatchObject({
      id: { kind: 'sequence', schema: 'app', name: 'ticket_seq' },
      keep_until: { kind: 'function', name: 'now', plus: '14 days' },
      stale_after: { kind: 'function', name: 'current_timestamp', minus: '01:30:00' },
      expire_in: { kind: 'value', value: '00:15:00' },
    });
    expect(result).toEqual([
      { id: '1010', state: 'created', qty: 1, total: '2.5', expire_in: '00:15:00' },
      { id: '1020', state: 'created', qty: 3, total: '7.5', expire_in: '00:15:00' },
      [
        { id: '1010', name: 'mail', state: 'created', total: '2.5', expiry: true, stale: true },
        { id: '1020', name: 'report', state: 'created', total: '7.5', expiry: true, stale: true },
      ],
    ]);
  });

  itReplaysExactly(() => ({ recording: dir, result, outDir: tmp.dir }), ADMIN);
});
