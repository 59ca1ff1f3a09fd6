// Exact replay of a committed example recording (recordings/examples/*) against a live example
// world whose tool API sits behind a counting sentinel: the acceptance check of the replayer.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { startWorld } from '../../examples/world/index.js';
import { materializeFs } from '../../sandbox/index.js';
import { fsIdentity, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';

export const EXAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../recordings/examples');

async function treeHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (d: string) => {
    for (const name of (await readdir(d)).sort()) {
      const p = path.join(d, name);
      const st = await stat(p);
      hash.update(`${path.relative(dir, p)}:${st.mode}:`);
      if (st.isDirectory()) await walk(p);
      else hash.update(await readFile(p));
    }
  };
  await walk(dir);
  return hash.digest('hex');
}

export interface ExampleWorld {
  check(name: string, out: string): Promise<void>;
  stop(): Promise<void>;
}

export async function openExampleWorld(): Promise<ExampleWorld> {
  const world = await startWorld();
  let hits = 0;
  const sentinel = createServer((_req, res) => {
    hits++;
    res.writeHead(500).end('the sentinel was reached');
  });
  await new Promise<void>((resolve) => sentinel.listen(0, '127.0.0.1', resolve));
  const sentinelUrl = `http://127.0.0.1:${(sentinel.address() as AddressInfo).port}`;
  return {
    async check(name, out) {
      const recording = await readRecording(path.join(EXAMPLES, name));
      const fsRoot = recording.manifest.world?.fsRoot as string;
      // The real workspace the agent was recorded in, re-created at its recorded path.
      const created = !existsSync(fsRoot);
      if (created) await materializeFs(recording.pre.fs ?? { files: {} }, recording.readBlob, fsRoot);
      try {
        const workspaceBefore = await treeHash(fsRoot);
        const dbBefore = await world.state();
        const modelCalls = world.modelLog().length;
        hits = 0;
        const system = recording.events.find((e) => e.type === 'model.called')?.payload as
          | { system?: string }
          | undefined;
        const result = await replay({
          recording: recording.dir,
          mode: 'exact',
          trustRecording: true, // committed: made elsewhere, so its command runs only when trusted
          env: {
            ...world.agentEnv('baseline'),
            TRAVEL_API_URL: sentinelUrl,
            WORKSPACE: fsRoot,
            // The agent reads its prompt from env: give it the one it was recorded with.
            ...(system?.system ? { SYSTEM_PROMPT: system.system } : {}),
          },
          out,
          stdio: 'pipe',
        });
        expect(result.divergences, result.output?.stderr).toEqual([]);
        expect(result.status).toBe('complete');
        expect(hits).toBe(0);
        expect(world.modelLog().length).toBe(modelCalls);
        expect(await treeHash(fsRoot)).toBe(workspaceBefore);
        expect(await world.state()).toEqual(dbBefore);
        expect(result.worldDiff).toEqual([]);
        const replayed = await readRecording(result.dir);
        // The same files (a replay keeps small files inline whichever way the recording kept them).
        expect(fsIdentity(replayed.post.fs)).toEqual(fsIdentity(recording.post.fs));
        expect(replayed.post.db?.tables).toEqual(recording.post.db?.tables);
        expect(replayed.manifest.replayOf).toBe(recording.manifest.id);
      } finally {
        if (created) await rm(fsRoot, { recursive: true, force: true });
      }
    },
    async stop() {
      await new Promise<void>((resolve) => sentinel.close(() => resolve()));
      await world.stop();
    },
  };
}
