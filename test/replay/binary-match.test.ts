// Binary request bodies that are not UTF-8 (protobuf, a custom framing) matched byte for byte at
// replay: two bodies that differ only in bytes a UTF-8 reading turns into the same replacement
// character are two requests, not one. Each look-alike gets its own recorded answer (also sent in
// the other order), and a body the recording never saw is a divergence in exact mode, not the
// next recorded answer served as if it matched. The API is stopped during the replays.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, tempDir } from '../record/helpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const AGENT = path.join(HERE, 'fixtures', 'binary-body-agent.mjs');

describe('binary request bodies that are not UTF-8, matched byte for byte', () => {
  const tmp = tempDir('tapedeck-binary-match-');
  afterAll(() => tmp.remove());

  for (const client of ['fetch', 'http']) {
    it(`${client}: look-alike bodies get their own answers; an unseen one diverges`, { timeout: 300_000 }, async () => {
      // The answer names the body's last byte.
      const api = await startServer((_req, _body, res, raw) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ last: raw.at(-1) }));
      });
      const out = path.join(tmp.dir, `rec-${client}`);
      let stdout = '';
      try {
        const recorded = await recordCommand({
          command: [process.execPath, AGENT],
          env: { API_URL: api.url, CLIENT: client },
          out,
          stdio: 'pipe',
          onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
        });
        expect(recorded.exitCode).toBe(0);
      } finally {
        await api.close();
      }
      const seen = stdout.trim().split('\n').pop() ?? '';
      expect(JSON.parse(seen)).toEqual(['{"last":128}', '{"last":129}', '{"last":130}']);

      const replayed = (name: string, env: Record<string, string>) =>
        replay({
          recording: out,
          mode: 'exact',
          out: path.join(tmp.dir, `replay-${client}-${name}`),
          stdio: 'pipe',
          isolation: 'none',
          env: { API_URL: api.url, CLIENT: client, ...env },
          timeoutMs: 120_000,
        });
      const same = await replayed('same', {});
      expect(same.exitCode, same.output?.stderr).toBe(0);
      expect(same.divergences).toEqual([]);
      expect(same.output?.stdout.trim().split('\n').pop()).toBe(seen);

      // The look-alike pair in the other order: each still gets its own answer. (Out of order is
      // said only when the recorded calls were not in flight together by their millisecond times:
      // these local calls take less than one, so it may not be.)
      const reversed = await replayed('reverse', { ORDER: 'reverse' });
      expect(reversed.output?.stdout.trim().split('\n').pop()).toBe(seen);
      expect(reversed.served.recording).toBe(3);
      for (const d of reversed.divergences) expect(d.message).toMatch(/only out of order; served it/);

      // A body never recorded (its last byte 0x85) is not the recorded 0x82 one.
      const swapped = await replayed('swap', { SWAP: '1' });
      expect(swapped.divergences.map((d) => d.kind)).toContain('unmatched-request');
      expect(swapped.output?.stdout ?? '').not.toContain(seen);
    });
  }
});
