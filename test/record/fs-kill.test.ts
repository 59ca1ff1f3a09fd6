// `tapedeck record --fs` SIGKILLed mid-run, while the agent writes small files (kept inline in
// their entries) and large ones (blobs): every file change the recording holds can be read back,
// none names a blob the recording lacks, and the world up to the last step is whole.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { fileBytes, INLINE_FILE_MAX, isInline, readRecording, worldAt } from '../../src/recording/index.js';
import { bin, root } from '../cli/run-cli.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-fs-kill-');
afterAll(() => tmp.remove());

// Each file's content says what it is, so a read-back can check the bytes, not only their hash.
// It ends by leaving a mark beside the workspace, so the test knows it is gone before cleaning up.
const AGENT = `
import { writeFileSync } from 'node:fs';
const ws = process.argv[2];
for (let i = 0; i < 400; i++) {
  const big = i % 3 === 0;
  const text = big ? ('big ' + i + ' ').repeat(${INLINE_FILE_MAX}) : 'small ' + i + '\\n';
  writeFileSync(ws + '/f' + (i % 50) + '.txt', text);
}
writeFileSync(ws + '/../agent-done', '');
`;

/** How many fs.changed lines events.jsonl holds now (0 before it exists). */
function changesWritten(out: string): number {
  try {
    return readFileSync(path.join(out, 'events.jsonl'), 'utf8').split('"type":"fs.changed"').length - 1;
  } catch {
    return 0;
  }
}

it('leaves every recorded file change readable, inline or blob, when the recorder is killed', async () => {
  const ws = path.join(tmp.dir, 'ws');
  mkdirSync(ws, { recursive: true });
  for (let i = 0; i < 50; i++) writeFileSync(path.join(ws, `f${i}.txt`), `seed ${i}\n`);
  const agent = path.join(tmp.dir, 'agent.mjs');
  writeFileSync(agent, AGENT);
  const out = path.join(tmp.dir, 'rec');
  const child = spawn(process.execPath, [bin, 'record', '--fs', ws, '--out', out, '--', process.execPath, agent, ws], {
    cwd: root,
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Killed once some changes are on disk (polled: however fast or loaded the machine is).
  let ended = false;
  void exited.then(() => (ended = true));
  while (!ended && changesWritten(out) < 30) await new Promise((resolve) => setTimeout(resolve, 5));
  child.kill('SIGKILL');
  await exited;
  // The agent outlives its recorder: it finishes its writes (its barriers answered 'closed').
  while (!existsSync(path.join(tmp.dir, 'agent-done'))) await new Promise((resolve) => setTimeout(resolve, 5));

  const recording = await readRecording(out);
  expect(recording.manifest.status).toBe('incomplete');
  expect(recording.warnings.filter((w) => w.includes('missing'))).toEqual([]);
  const changes = recording.events.flatMap((e) => (e.type === 'fs.changed' ? [e.payload] : []));
  expect(changes.length).toBeGreaterThanOrEqual(30);
  expect(changes.some((c) => c.after && isInline(c.after))).toBe(true);
  expect(changes.some((c) => c.after && !isInline(c.after))).toBe(true);
  for (const change of changes) {
    if (!change.after) continue;
    const text = Buffer.from(fileBytes(change.after, recording.readBlob)).toString('utf8');
    // Empty: the tracker looked between writeFileSync's truncation and its write.
    expect(text).toMatch(/^((seed|small|big) \d+|$)/);
  }
  const last = Math.max(...recording.events.map((e) => e.stepId));
  for (const entry of Object.values(worldAt(recording, last).fs.files)) {
    expect(fileBytes(entry, recording.readBlob).length).toBe(entry.size);
  }
}, 60_000);
