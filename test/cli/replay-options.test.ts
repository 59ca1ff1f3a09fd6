// `tapedeck replay` refuses a step the recording does not have before it starts any sandbox, and
// a changed prompt is asked of the model again unless --mode exact asks whether the run reproduces.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROMPTS, startModelServer } from '../../examples/world/index.js';
import { example, expectOneLineError, root, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-replay-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck replay step options', () => {
  it('--until and --fork-at past the last step are bad input, and nothing is written', async () => {
    const out = join(tmp, 'out');
    const [until, forkAt] = await Promise.all([
      tapedeck(['replay', example('openai-baseline'), '--until', '99', '--out', out]),
      tapedeck(['replay', example('openai-baseline'), '--fork-at', '99', '--mode', 'counterfactual', '--out', out]),
    ]);
    expectOneLineError(until, /--until 99 is past the recording's last step \(\d+\)/);
    expectOneLineError(forkAt, /--fork-at 99 is past the recording's last step/);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe('tapedeck replay with a changed prompt', () => {
  it('asks the model again by default, and in --mode exact names every model call the prompt changed', async () => {
    const model = await startModelServer();
    try {
      const args = (name: string, ...more: string[]) => [
        'replay',
        example('openai-baseline'),
        '--trust-recording',
        '--system-prompt',
        PROMPTS.fixed,
        '--model-endpoint',
        model.url,
        '--config',
        join(root, 'examples/tapedeck.config.ts'),
        '--out',
        join(tmp, name),
        '--json',
        ...more,
      ];
      const [asked, exact] = await Promise.all([
        tapedeck(args('asked'), { timeoutMs: 170_000 }),
        tapedeck(args('exact', '--mode', 'exact'), { timeoutMs: 170_000 }),
      ]);
      type Result = { served: Record<string, number>; divergences: Array<{ kind: string; message: string }> };
      const last = (out: string) => JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Result;
      const manifest = (name: string) =>
        JSON.parse(readFileSync(join(tmp, name, 'manifest.json'), 'utf8')) as { replay?: { mode?: string } };

      // No --mode: counterfactual, the changed prompt's calls sent to the model.
      expect(manifest('asked').replay?.mode).toBe('counterfactual');
      expect(last(asked.stdout).served.live, asked.stderr).toBeGreaterThan(0);

      // --mode exact: nothing is asked; each of the 5 model calls is a divergence, not a silent answer.
      expect(manifest('exact').replay?.mode).toBe('exact');
      const result = last(exact.stdout);
      expect(exact.code, exact.stderr).toBe(1);
      expect(result.served.live).toBe(0);
      expect(result.divergences.filter((d) => d.kind === 'different-request')).toHaveLength(5);
    } finally {
      await model.close();
    }
  });
});
