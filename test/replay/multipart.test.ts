// File uploads (multipart/form-data) replayed exactly: the client draws a new boundary for every
// request, so the live request never repeats the recorded one byte for byte, yet matching reads
// both with one fixed boundary (src/replay/normalize.ts) and each upload gets its own recorded
// answer — also two uploads that differ only in their file's bytes, sent in the other order —
// with the API stopped: no divergence, nothing live, the agent sees what it saw.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, tempDir } from '../record/helpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const AGENT = path.join(HERE, 'fixtures', 'multipart-agent.mjs');
const HAS_FORM_DATA = existsSync(path.join(HERE, '..', '..', 'node_modules', 'form-data', 'package.json'));
const CLIENTS = HAS_FORM_DATA ? ['fetch', 'axios'] : ['fetch'];

describe('multipart uploads replayed with a new boundary', () => {
  const tmp = tempDir('tapedeck-multipart-');
  afterAll(() => tmp.remove());

  for (const client of CLIENTS) {
    it(`${client}: each upload gets its own recorded answer with the API stopped`, { timeout: 300_000 }, async () => {
      let uploads = 0;
      const boundaries = new Set<string>();
      // The answer names the upload and what it carried (the body with its boundary left out).
      const api = await startServer((req, body, res) => {
        const boundary = /boundary=([^;]+)/.exec(req.headers['content-type'] ?? '')?.[1] ?? '';
        boundaries.add(boundary);
        const carried = createHash('sha256').update(body.split(boundary).join('')).digest('hex');
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: `file-${++uploads}`, carried }));
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
      // Three uploads, each with its own boundary, the last two carrying different bytes.
      expect(boundaries.size).toBe(3);
      const seen = stdout.trim().split('\n').pop() ?? '';
      const answers = (JSON.parse(seen) as Array<{ status: number; text: string }>).map(
        (a) => JSON.parse(a.text) as { id: string; carried: string },
      );
      expect(answers.map((a) => a.id)).toEqual(['file-1', 'file-2', 'file-3']);
      expect(answers[1]?.carried).not.toBe(answers[2]?.carried);

      // The API is stopped: an upload that went live would fail.
      const replayed = async (name: string, isolation: 'none' | undefined, order: 'recorded' | 'reverse') => {
        const result = await replay({
          recording: out,
          mode: 'exact',
          out: path.join(tmp.dir, `replay-${client}-${name}`),
          stdio: 'pipe',
          ...(isolation ? { isolation } : {}),
          env: { API_URL: api.url, CLIENT: client, ORDER: order },
          timeoutMs: 120_000,
        });
        expect(result.exitCode, `${name}: ${result.output?.stderr}`).toBe(0);
        expect(result.served.recording).toBe(3);
        expect(result.output?.stdout.trim().split('\n').pop()).toBe(seen);
        return result;
      };
      for (const isolation of ['none', undefined] as const) {
        const result = await replayed(isolation ?? 'default', isolation, 'recorded');
        expect(result.divergences, result.output?.stderr).toEqual([]);
      }
      // The look-alike uploads in the other order: each still gets its own answer, only out of order.
      const reversed = await replayed('reverse', 'none', 'reverse');
      expect(reversed.divergences.length).toBeGreaterThan(0);
      for (const d of reversed.divergences) expect(d.message).toMatch(/only out of order; served it/);
    });
  }
});
