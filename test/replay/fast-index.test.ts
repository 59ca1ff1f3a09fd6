// The preload's fast index is written to its file entry by entry, in 1 MB chunks (never one
// string): the file must still be one JSON array holding every call, in order, with its recorded
// answer byte for byte, however the chunks fall.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastEntry } from '../../sandbox/index.js';
import { readRecording } from '../../src/recording/index.js';
import { indexCalls } from '../../src/replay/match.js';
import { writePreloadConfig } from '../../src/replay/setup.js';
import { writeRecording } from './build.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("the preload's fast index", () => {
  it('holds every call in order with its answer byte for byte when written in several chunks', async () => {
    const tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-fast-index-'));
    dirs.push(tmp);
    // 3,000 calls with 1 KB answers (one stored as a blob, past the inline limit): ~4 MB of index.
    const calls = Array.from({ length: 3000 }, (_, i) => ({
      kind: 'tool' as const,
      url: `http://127.0.0.1:8787/items/${i}?q="quoted",comma`,
      ...(i % 2 === 0 ? { body: { i, note: 'é ✓ \n ]},' } } : {}),
      response: { i, text: `${'x'.repeat(i === 7 ? 6000 : 1000)} ${i} "]" ,` },
    }));
    const dir = await writeRecording(path.join(tmp, 'rec'), { calls });
    const recording = await readRecording(dir);
    const { http } = indexCalls(recording);
    const config = JSON.parse(
      readFileSync(
        await writePreloadConfig({
          recording,
          calls: http,
          options: { recording: dir, mode: 'exact' },
          tmp,
          socket: path.join(tmp, 'ipc.sock'),
          fsRoot: undefined,
          db: undefined,
          fast: true,
        }),
        'utf8',
      ),
    ) as { fastIndex: string };
    const text = readFileSync(config.fastIndex, 'utf8');
    expect(text.length).toBeGreaterThan(3 << 20);
    const entries = JSON.parse(text) as FastEntry[];
    expect(entries).toHaveLength(3000);
    for (const [i, entry] of entries.entries()) {
      expect(entry.i).toBe(i);
      if (entry.ask) throw new Error(`call ${i} was not answerable by the preload`);
      expect(entry.body).toBe(i % 2 === 0 ? JSON.stringify(calls[i]?.body) : '');
      expect(entry.reply.body?.text).toBe(JSON.stringify(calls[i]?.response));
    }
  });
});
