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

  it('a secret learned during the run leaves the manifest at the next flush and at close, whatever the patch', async () => {
    // A value the agent got in a variable of no secret name (and on its command line), first known
    // as a secret when a request sends it in a secret-named header.
    const learned = `sess${'Q7w'.repeat(6)}`;
    for (const patch of [undefined, { name: 'patched' }]) {
      const dir = join(tmp, `learned-${patch === undefined ? 'plain' : 'patched'}`);
      const writer = await createRecordingWriter(dir, {
        name: 'env',
        agent: { command: ['node', 'agent.mjs', '--session', learned], cwd: tmp, env: { SESSION_REF: learned } },
        redaction: { key: 'test-key', env: false },
      });
      // Not yet known: the first manifest holds it (nothing said it was a secret).
      expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toContain(learned);
      writer.append({
        type: 'http.exchange',
        stepId: 1,
        payload: {
          exchangeId: 'x1',
          request: { method: 'GET', url: 'http://127.0.0.1:9/me', headers: { 'x-session-token': learned } },
          response: { status: 200, headers: {} },
        },
      } as Parameters<typeof writer.append>[0]);
      writer.append({ type: 'step.completed', stepId: 1, payload: { status: 'ok' } } as Parameters<
        typeof writer.append
      >[0]);
      // Flushed at the step's end: the manifest is written again without it.
      expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).not.toContain(learned);
      await writer.close('complete', patch);
      expect(everyByte(dir)).not.toContain(learned);
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
        agent: { env?: Record<string, string> };
      };
      expect(manifest.agent.env?.SESSION_REF).toMatch(/^\[REDACTED:hmac:[0-9a-f]{12}\]$/);
    }
  });

  it('keeps each placeholder as it is when the manifest is redacted again (setManifest, close)', async () => {
    // Redacted again, a placeholder was taken for a secret of its own and hashed: the env's
    // placeholder changed at every write and no longer named the secret.
    const canary = 'canary-Zq81xT0p';
    const dir = join(tmp, 'again');
    const writer = await createRecordingWriter(dir, {
      name: 'env',
      agent: {
        command: ['node', 'agent.mjs', '--api-key', canary],
        cwd: tmp,
        env: { OPENAI_API_KEY: canary, DATABASE_URL: `postgres://app:${canary}@127.0.0.1:5432/app` },
      },
      redaction: { key: 'test-key', env: false },
    });
    const agentOf = () => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).agent;
    const first = agentOf();
    const placeholder = writer.redactor.placeholder(canary);
    expect(first.env.OPENAI_API_KEY).toBe(placeholder);
    expect(first.command).toEqual(['node', 'agent.mjs', '--api-key', placeholder]);
    writer.setManifest({ name: 'renamed' });
    expect(agentOf()).toEqual(first);
    await writer.close('complete', { name: 'final' });
    expect(agentOf()).toEqual(first);
  });
});
