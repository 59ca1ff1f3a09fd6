// `npm run demo` end to end (on PGlite, and on the real server when TAPEDECK_PG_URL is set):
// the baseline fails the hard gate and bisects to step 3; replayed with the fixed prompt in the
// sandbox (its travel API re-hosted there) it books the right passenger with nothing real touched;
// the fixed prompt run live passes. Run from a
// temp folder so its recordings land there.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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
// PGlite always (what a fresh clone runs); the real server as well when TAPEDECK_PG_URL is set.
const variants: Array<{ name: string; args: string[]; world: string }> = [
  { name: 'PGlite', args: [], world: 'world: pglite database' },
  ...(url ? [{ name: 'the real Postgres server', args: ['--db', url], world: 'world: postgres database' }] : []),
];

describe.each(variants)('npm run demo on $name', ({ args, world }) => {
  it('records the baseline (fails at step 3), replays it with the fixed prompt, and the fixed run passes', {
    timeout: 400_000,
  }, async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'tapedeck-demo-'));
    try {
      const { code, out } = await runDemo(args, cwd);
      expect(code, out).toBe(0);
      expect(out).toContain(world);
      expect(out).not.toContain('not built yet');
      expect(out).toContain('passenger P-100 (Priya Natarajan)');
      expect(out).toContain('booked for Dana Reyes (P-102), as asked');
      expect(out).toMatch(/recording: .*demo-openai-baseline-.* \(9 steps\)/);
      expect(out).toMatch(/recording: .*demo-openai-fixed-.* \(16 steps\)/);
      expect(out).toContain('first divergent step 3 (THINK)');
      expect(out).toMatch(/score: +hard gate FAIL, failure codes \["WRONG_EXECUTION_TARGET"/);
      expect(out).toMatch(/score: +hard gate PASS/);
      expect(out).toMatch(/replay: +.*replay-.* \(complete\), first divergent step 3/);
      // Step 2: the fixed prompt, replayed in the sandbox with the travel API re-hosted there, books
      // Dana Reyes (P-102) in the sandbox database and passes the hard gate; the real API served no
      // request and the real database and workspace have the same digest before and after.
      const step2 = out.slice(out.indexOf('2. the baseline replayed'), out.indexOf('3. fixed prompt'));
      expect(step2).toMatch(/answer: +Booked .* for Dana Reyes \(P-102\)/);
      expect(step2).toMatch(/answers: +.*\d+ sandbox/);
      expect(step2).toContain('held back: 0 side effect(s)');
      expect(step2).toMatch(/sandbox: +step \d+ inserted booking BK-0001 for passenger P-102, flight FL-102/);
      expect(step2).toMatch(/score: +hard gate PASS/);
      const real =
        /real world: API requests during the replay (\d+); database (\w+) -> (\w+); workspace (\w+) -> (\w+)/.exec(
          step2,
        );
      expect(real, step2).not.toBeNull();
      const [, hits, dbBefore, dbAfter, wsBefore, wsAfter] = real as RegExpExecArray;
      expect(Number(hits)).toBe(0);
      expect(dbAfter).toBe(dbBefore);
      expect(wsAfter).toBe(wsBefore);
      expect(out).toContain('npx tapedeck tui ');
      expect((await readdir(join(cwd, 'recordings'))).length).toBeGreaterThanOrEqual(2);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
