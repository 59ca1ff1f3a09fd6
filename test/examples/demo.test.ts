// `npm run demo` end to end (on the real server when TAPEDECK_PG_URL is set, else on PGlite):
// the baseline fails the hard gate and bisects to step 3, the fixed prompt passes. Run from a
// temp folder so its recordings land there.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function runDemo(args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'examples', 'demo.ts'), ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

const url = process.env.TAPEDECK_PG_URL;

it(`runs the demo on ${url ? 'the real Postgres server' : 'PGlite'}: baseline fails at step 3, fixed passes`, async () => {
  const cwd = await mkdtemp(join(tmpdir(), 'tapedeck-demo-'));
  try {
    const { code, out } = await runDemo(url ? ['--db', url] : [], cwd);
    expect(code, out).toBe(0);
    expect(out).toContain(url ? 'world: postgres database' : 'world: pglite database');
    expect(out).toContain('passenger P-100 (Priya Natarajan)');
    expect(out).toContain('booked for Dana Reyes (P-102), as asked');
    expect(out).toMatch(/recording: .*demo-openai-baseline-.* \(9 steps\)/);
    expect(out).toMatch(/recording: .*demo-openai-fixed-.* \(16 steps\)/);
    if (!out.includes('not built yet')) {
      expect(out).toContain('first divergent step 3 (THINK)');
      expect(out).toMatch(/score: +hard gate FAIL, failure codes \["WRONG_EXECUTION_TARGET"/);
      expect(out).toMatch(/score: +hard gate PASS/);
    }
    expect(out).toContain('npx tapedeck tui ');
    expect((await readdir(join(cwd, 'recordings'))).length).toBeGreaterThanOrEqual(2);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
});
