// `replay --until K` where the steps after a call are the agent's own database writes (an insert
// through its own client after the API answered): the world of step K holds the rows of steps 1..K
// only, as the recording's world at K does, whatever kind of step K is.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { type Recording, readRecording, worldAt } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, startServer, type TestServer, tempDir } from '../record/helpers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/until-db-agent.mjs', import.meta.url));

describe.runIf(PG_URL)('replay --until K with the agent’s own database writes between calls', () => {
  const tmp = tempDir('tapedeck-until-db-');
  let api: TestServer;
  let db: { url: string; drop(): Promise<void> };
  let recording: Recording;
  let env: Record<string, string>;

  beforeAll(async () => {
    let n = 0;
    api = await startServer((_req, _body, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `RF-${++n}` }));
    });
    db = await scratchDatabase(
      PG_URL as string,
      'tapedeck_until_db_',
      'CREATE SCHEMA desk; CREATE TABLE desk.refunds (id text PRIMARY KEY, n int NOT NULL);',
    );
    env = { TOOL_URL: api.url, DESK_DB_URL: db.url };
    const out = path.join(tmp.dir, 'rec');
    const result = await recordCommand({
      command: [process.execPath, AGENT],
      env,
      dbUrl: db.url,
      out,
      stdio: 'pipe',
    });
    expect(result.exitCode).toBe(0);
    recording = await readRecording(out);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await db?.drop();
    tmp.remove();
  });

  const rowsOf = (snapshot: { tables: Array<{ schema: string; name: string; rows: unknown[] }> } | undefined) =>
    (snapshot?.tables.find((t) => t.schema === 'desk' && t.name === 'refunds')?.rows ?? [])
      .map((r) => JSON.stringify(r))
      .sort();

  it('records each insert as a step of its own after its call', () => {
    const kinds = recording.events.flatMap((e) => (e.type === 'step.started' ? [e.payload.stateType] : []));
    expect(kinds).toEqual(['API_CALL', 'DB_QUERY', 'API_CALL', 'DB_QUERY', 'API_CALL', 'DB_QUERY']);
  });

  it('stops at every step K with the rows of steps 1..K', { timeout: 240_000 }, async () => {
    for (let k = 1; k <= 5; k++) {
      const result = await replay({
        recording: recording.dir,
        mode: 'exact',
        until: k,
        env,
        out: path.join(tmp.dir, `until-${k}`),
        stdio: 'pipe',
        isolation: 'none',
      });
      const replayed = await readRecording(result.dir);
      const expected = rowsOf(worldAt(recording, k).db);
      expect(expected.length, `until ${k}`).toBe([0, 1, 1, 2, 2][k - 1]);
      expect(rowsOf(replayed.post.db), `until ${k}: the replay's post snapshot`).toEqual(expected);
      expect(rowsOf(worldAt(replayed, k).db), `until ${k}: the replay's world at ${k}`).toEqual(expected);
      expect(result.divergences, `until ${k}`).toEqual([]);
    }
  });
});
