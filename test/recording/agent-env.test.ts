// The agent's explicit env is kept in the manifest for replay, with its secrets redacted at write time.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRecordingWriter, readRecording } from '../../src/recording/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-agent-env-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function everyByte(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'latin1'))
    .join('\n');
}

describe('manifest agent env', () => {
  it('keeps plain values and redacts secret names, URL passwords and tokens', async () => {
    const canary = 'canary-Zq81xT0p';
    const dir = join(tmp, 'rec');
    const writer = await createRecordingWriter(dir, {
      name: 'env',
      agent: {
        command: ['node', 'agent.mjs'],
        cwd: tmp,
        env: {
          WORKSPACE: '/srv/workspace',
          OPENAI_API_KEY: canary,
          DATABASE_URL: `postgres://app:${canary}@127.0.0.1:5432/app`,
          EXTRA_HEADER: `Bearer sk-${canary}${canary}`,
        },
      },
      redaction: { key: 'test-key' },
    });
    await writer.close('complete');
    expect(everyByte(dir)).not.toContain(canary);
    const env = (await readRecording(dir)).manifest.agent.env ?? {};
    expect(env.WORKSPACE).toBe('/srv/workspace');
    expect(env.OPENAI_API_KEY).toMatch(/^\[REDACTED:hmac:[0-9a-f]{12}\]$/);
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/app:\[REDACTED:hmac:[0-9a-f]{12}\]@127\.0\.0\.1:5432\/app$/);
  });
});
