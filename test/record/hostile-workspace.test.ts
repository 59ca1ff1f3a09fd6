// What is in the recorded folder is the agent's to make: names a recording cannot hold as paths
// (a backslash, a newline, an escape sequence; src/recording/paths.ts), there before the run or
// made during it, and links — one to a file outside, one to a folder above itself (a loop for any
// walk that follows links). `tapedeck record --fs` keeps a recording every command reads, the
// files it cannot hold left out and named in a warning; its replay, in the OS sandbox and with
// `--isolation none` (the in-process fs), runs the agent to the end with the recorded end state.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { readRecording } from '../../src/recording/index.js';
import { tapedeck } from '../cli/run-cli.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-untrusted-workspace-');
afterAll(() => tmp.remove());
const isolations = ['none', ...(detectIsolation().level === 'bwrap' ? ['bwrap'] : [])];

describe('a recorded folder holding names a recording cannot hold, and links', () => {
  it('records with a warning naming them, and replays to the recorded end state', async () => {
    const workspace = path.join(tmp.dir, 'ws');
    mkdirSync(workspace);
    writeFileSync(path.join(workspace, 'notes.txt'), 'before');
    writeFileSync(path.join(workspace, 'was\\here.txt'), 'there before the run');
    const agent = path.join(tmp.dir, 'agent.mjs');
    writeFileSync(
      agent,
      `import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
const ws = process.env.WS;
writeFileSync(ws + '/made\\\\by\\\\agent.txt', 'a');
writeFileSync(ws + '/new\\nline.txt', 'b');
writeFileSync(ws + '/esc\\u001b[31m.txt', 'c');
mkdirSync(ws + '/d');
symlinkSync('../..', ws + '/d/up');
symlinkSync('/etc/hostname', ws + '/outside');
writeFileSync(ws + '/d/kept.txt', 'kept');
writeFileSync(ws + '/notes.txt', 'after');
console.log('agent done');
`,
    );
    const out = path.join(tmp.dir, 'rec');
    const recorded = await tapedeck(['record', '--fs', workspace, '--out', out, '--', process.execPath, agent], {
      env: { WS: workspace },
      timeoutMs: 120_000,
    });
    expect(recorded.stderr).not.toMatch(/\n\s+at /);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(recorded.stderr).toMatch(
      /tapedeck: warning: 4 file\(s\) under .* are not in the recording: their names are not paths a recording holds .*"made\\\\by\\\\agent\.txt"/,
    );
    const recording = await readRecording(out);
    expect(recording.manifest.status).toBe('complete');
    expect(Object.keys(recording.post.fs?.files ?? {}).sort()).toEqual(['d/kept.txt', 'notes.txt']);

    for (const isolation of isolations) {
      const replayed = await tapedeck(
        ['replay', out, '--out', path.join(tmp.dir, `replay-${isolation}`), '--isolation', isolation],
        { env: { WS: workspace }, timeoutMs: 120_000 },
      );
      expect(replayed.stderr, isolation).not.toMatch(/\n\s+at |ELOOP/);
      expect(replayed.stdout + replayed.stderr, isolation).toContain('agent done');
      expect(replayed.stdout + replayed.stderr, isolation).toContain('end state equals the recorded end state');
      expect(replayed.code, `${isolation}: ${replayed.stderr}`).toBe(0);
    }
  }, 240_000);
});
