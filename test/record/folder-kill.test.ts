// A recording folder appears whole or not at all: a real recorder process (in-process record(),
// 16 runs at a time, creating, finishing and dropping recordings without pause) is SIGKILLed at
// many random moments. After every kill, every folder a reader can see is a readable recording
// (manifest and events; never an empty or half-made folder), what the kill cut short is a hidden
// `.tmp-` folder, and the next command that lists the folder (`tapedeck list`, the real CLI, or
// the listing the TUI and every command use) leaves no temp folder behind.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, watch } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRecordings, readRecording } from '../../src/recording/index.js';
import { root, tapedeck } from '../cli/run-cli.js';
import { seeded } from '../postgres/db-fixture.js';
import { FIXTURES, tempDir } from './helpers.js';

const KILLS = Number(process.env.TAPEDECK_FOLDER_KILLS ?? 24);
const tmp = tempDir('tapedeck-folder-kill-');
afterAll(() => tmp.remove());

/**
 * Starts the recorder, waits until it creates recordings, kills it `delayMs` later — or, with
 * `delayMs` 'making', the moment a folder is being made (a `.tmp-` name appears), so that some
 * kills land in that window however fast or loaded the machine is.
 */
async function killRecorder(folder: string, delayMs: number | 'making'): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(FIXTURES, 'creating-recorder.ts'), folder], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve();
    });
    void exited.then(() => reject(new Error(`the recorder exited: ${err}`)));
  });
  if (delayMs === 'making') {
    await new Promise<void>((resolve) => {
      const watcher = watch(folder, (_event, name) => {
        if (!String(name ?? '').startsWith('.tmp-')) return;
        clearTimeout(timer);
        watcher.close();
        resolve();
      });
      const timer = setTimeout(() => {
        watcher.close();
        resolve();
      }, 30_000);
    });
  } else await new Promise((resolve) => setTimeout(resolve, delayMs));
  child.kill('SIGKILL');
  await exited;
}

describe('a recorder SIGKILLed while it creates recording folders', () => {
  it(`never leaves an empty or half folder where a reader looks, nor a temp folder after the next command (${KILLS} kills)`, async () => {
    const random = seeded(Number(process.env.TAPEDECK_KILL_SEED ?? 17));
    const folder = path.join(tmp.dir, 'recordings');
    mkdirSync(folder);
    let tempsSeen = 0;
    let recordings = 0;
    for (let k = 0; k < KILLS; k++) {
      // Half the kills the moment a folder is being made; the rest at random moments, most of them
      // early (the layer installing, the first folders made).
      await killRecorder(folder, k % 2 === 1 ? 'making' : Math.floor(random() * (k % 3 === 0 ? 400 : 60)));
      const names = existsSync(folder) ? readdirSync(folder) : [];
      const temps = names.filter((n) => n.startsWith('.tmp-'));
      tempsSeen += temps.length;
      for (const name of names.filter((n) => !n.startsWith('.'))) {
        const dir = path.join(folder, name);
        expect(readdirSync(dir).sort(), dir).toEqual(expect.arrayContaining(['events.jsonl', 'manifest.json']));
        const recording = await readRecording(dir);
        expect(['complete', 'incomplete'], dir).toContain(recording.manifest.status);
      }
      // The next command: every third one the real CLI, the others the listing every command uses.
      if (k % 3 === 0) {
        const listed = await tapedeck(['list', folder, '--json'], { timeoutMs: 120_000 });
        expect(listed.code, listed.stderr).toBe(0);
        recordings = (JSON.parse(listed.stdout) as unknown[]).length;
      } else recordings = (await listRecordings(folder)).length;
      expect(readdirSync(folder).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
      expect(readdirSync(folder).filter((n) => !n.startsWith('.'))).toHaveLength(recordings);
    }
    console.log(`folder kills: ${KILLS}, temp folders cut short ${tempsSeen}, recordings at the end ${recordings}`);
    // The kills fell where it matters: some cut a folder's making or removal short.
    expect(tempsSeen).toBeGreaterThan(0);
    expect(recordings).toBeGreaterThan(0);
  }, 600_000);
});
