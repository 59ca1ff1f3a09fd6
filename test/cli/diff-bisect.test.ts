// `tapedeck diff` and `tapedeck bisect` read at 80 columns when not given a width.
import { describe, expect, it } from 'vitest';
import { example, tapedeck } from './run-cli.js';

describe('diff and bisect at 80 columns', () => {
  it('the side-by-side view of diff and the bisect progress lines fit 80 columns', async () => {
    const [diff, bisect] = await Promise.all([
      tapedeck(['diff', example('openai-baseline'), example('openai-fixed-stream')]),
      tapedeck(['bisect', example('openai-baseline'), '--predicate', 'grounding']),
    ]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('first divergence: other-tool at a step 3, b step 3');
    for (const line of diff.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(bisect.code).toBe(1);
    const progress = bisect.stderr.split('\n').filter((l) => l.startsWith('bisect: ['));
    expect(progress.length).toBeGreaterThan(1);
    for (const line of progress) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(progress[0]).toMatch(/^bisect: \[1\/\d\] step 9: bad \(good ≤ 0, bad ≥ 9\) — step 3 \(THINK decided/);
    expect(bisect.stdout).toMatch(/^first bad step: 3 /m);
  });

  it('the --shell example of bisect --help finds the step that wrote the wrong passenger', async () => {
    const help = await tapedeck(['bisect', '--help']);
    const shell = /--shell '([^']+)'/.exec(help.stdout)?.[1];
    expect(shell).toBeDefined();
    const run = await tapedeck(['bisect', example('openai-baseline'), '--shell', shell ?? '']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^first bad step: 6 \(FILE_WRITE write_file\)$/m);
  });
});
