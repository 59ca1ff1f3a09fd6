// A worker's replay job whose agent hangs finishes as a job (not retried, not stuck): the replay is
// stopped by the job's timeout, written and ingested, and the job's output says it timed out.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { openWarehouse, type Warehouse } from '../../src/store/index.js';
import { jobHandlers } from '../../src/store/jobs.js';
import { tempDir } from '../record/helpers.js';
import { writeRecording } from '../replay/build.js';
import { processesWith } from '../support/processes.js';

const AGENT = join(import.meta.dirname, '../replay/fixtures/hung-agent.mjs');

let tmp: ReturnType<typeof tempDir>;
let wh: Warehouse;
beforeAll(async () => {
  tmp = tempDir('tapedeck-worker-timeout-');
  wh = await openWarehouse({ dir: join(tmp.dir, 'warehouse') });
});
afterAll(async () => {
  await wh?.close();
  tmp?.remove();
});

describe('a worker replay job with a hung agent', () => {
  it('times out by the job’s timeout, and its output says so', async () => {
    const token = `job-${randomBytes(6).toString('hex')}`;
    const recording = await writeRecording(join(tmp.dir, 'rec'), {
      command: [process.execPath, AGENT, 'child', token],
      calls: [{ kind: 'tool', url: 'http://api.test/items', response: { items: [1] } }],
    });
    const handlers = jobHandlers({ warehouse: wh, workDir: join(tmp.dir, 'worker') });
    const output = (await handlers.replay({
      id: 'job-1',
      kind: 'replay',
      payload: { recording, mode: 'exact', trustRecording: true, timeout: '5s' },
      retryCount: 0,
      singletonKey: null,
    })) as { status: string; stopped?: string; replay: string };
    expect(output.status).toBe('timed-out');
    expect(output.stopped).toMatch(/^timed out: no progress for 5s \(the idle limit\) after step 1/);
    expect(processesWith(token)).toEqual([]);
    expect((await readRecording(output.replay)).manifest.status).toBe('timed-out');
  }, 120_000);

  it('a bad timeout in a job is the job’s one-line error', async () => {
    const handlers = jobHandlers({ warehouse: wh, workDir: join(tmp.dir, 'worker') });
    await expect(
      handlers.replay({
        id: 'job-2',
        kind: 'replay',
        payload: { recording: join(tmp.dir, 'rec'), timeout: 'soon' },
        retryCount: 0,
        singletonKey: null,
      }),
    ).rejects.toThrow(/payload field timeout: "soon" is not a duration/);
  });
});
