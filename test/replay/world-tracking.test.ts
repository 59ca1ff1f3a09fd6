// The replay's world copy on disk (OS sandbox) is read back by looking at what may have changed
// (what the agent's thread wrote, what the watcher named) rather than by reading the whole tree at
// every call; a child process or a worker makes the calls around it read everything again. Here
// an agent writes its fs root in every way it can between calls (this thread: sync, callback,
// promises, FileHandle, stream, descriptor, rename, unlink, folders, copies; a shell child, a child
// it waits for, a worker) in a world of 1,000 files, and the replay must put every change at the
// step the recording put it, with the same content, and end in the recorded end state.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'world-writer-agent.mjs');
const CALLS = 30;
const bwrap = detectIsolation().level === 'bwrap';

/** Each fs.changed event of a recording as "step op path sha". */
async function changes(dir: string): Promise<string[]> {
  const rec = await readRecording(dir, { verifyBlobs: false });
  return rec.events
    .filter((e) => e.type === 'fs.changed')
    .map((e) => {
      const p = e.payload as { op: string; path: string; after?: { sha256: string } };
      return `${e.stepId} ${p.op} ${p.path} ${p.after?.sha256.slice(0, 12) ?? '-'}`;
    })
    .sort();
}

describe.skipIf(!bwrap)('the world copy read back in the OS sandbox', () => {
  const tmp = tempDir('tapedeck-world-tracking-');
  let api: TestServer;

  beforeAll(async () => {
    api = await startServer(async (_req, _body, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
  });
  afterAll(async () => {
    await api?.close();
    tmp.remove();
  });

  it('puts every change, made any way by any process of the tree, at its recorded step', async () => {
    const ws = path.join(tmp.dir, 'ws');
    for (let d = 0; d < 10; d++) {
      mkdirSync(path.join(ws, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(path.join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
    }
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordCommand({
      command: [process.execPath, AGENT, api.url, ws, String(CALLS)],
      fsRoot: ws,
      out,
      stdio: 'pipe',
    });
    expect(recorded.exitCode).toBe(0);
    const want = await changes(out);
    // Every way of writing left its mark (a way that wrote nothing would test nothing).
    for (const made of [
      'd0/w',
      'd1/log',
      'd1/cb',
      'd2/h',
      'd3/s',
      'd4/fd',
      'd5/moved',
      'd7/sh',
      'd8/ch',
      'd9/wk',
      'new',
    ]) {
      expect(
        want.some((c) => c.includes(` ${made}`)),
        made,
      ).toBe(true);
    }
    expect(want.some((c) => c.includes(' delete d6/'))).toBe(true);
    await api.close();

    const again = path.join(tmp.dir, 'replay');
    const result = await replay({ recording: out, mode: 'exact', out: again, stdio: 'pipe', isolation: 'bwrap' });
    expect(result.divergences).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(await changes(again)).toEqual(want);
  });
});
