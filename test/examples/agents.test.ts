// Each example agent (openai streaming and not, anthropic, openai Responses, Gemini streamed) under both prompts, on the embedded
// PGlite world: the end state of the database and the workspace. And the fixed prompt line by
// line: only the passenger line flips the outcome (what prompt ddmin should find).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentName, PROMPTS, type PromptName, startWorld, type World } from '../../examples/world/index.js';
import { expectEndState, TRAJECTORIES, toolTrace } from './expect-world.js';

const AGENTS: Array<[AgentName, boolean]> = [
  ['openai', false],
  ['openai', true],
  ['anthropic', false],
  ['openai-responses', false],
  ['gemini', true],
];
// anthropic streaming runs in world.test.ts (under an interceptor) and agents-postgres.test.ts.

let world: World;
let text: Record<PromptName, string>;
beforeAll(async () => {
  world = await startWorld();
  text = { baseline: await readFile(PROMPTS.baseline, 'utf8'), fixed: await readFile(PROMPTS.fixed, 'utf8') };
});
afterAll(async () => {
  await world?.stop();
});

describe('example agents on the PGlite world', () => {
  for (const prompt of ['baseline', 'fixed'] as PromptName[]) {
    for (const [agent, stream] of AGENTS) {
      it(`${agent} (${stream ? 'streaming' : 'non-streaming'}) under the ${prompt} prompt books for ${prompt === 'fixed' ? 'the right' : 'the wrong'} passenger`, async () => {
        await world.reset();
        const run = await world.runAgent({ agent, stream, prompt });
        expectEndState(prompt, run, await world.state());
        expect(toolTrace(run)).toEqual(TRAJECTORIES[prompt]);
        expect(world.modelLog()).toHaveLength(prompt === 'fixed' ? 8 : 5);
      });
    }
  }

  it('takes the prompt from SYSTEM_PROMPT over SYSTEM_PROMPT_FILE', async () => {
    await world.reset();
    const run = await world.runAgent({ agent: 'openai', prompt: 'baseline', env: { SYSTEM_PROMPT: text.fixed } });
    expectEndState('fixed', run, await world.state());
  });
});

describe('the fixed prompt, line by line', () => {
  const lines = () => {
    const baseline = text.baseline.trim().split('\n');
    const added = text.fixed
      .trim()
      .split('\n')
      .filter((line) => !baseline.includes(line));
    return { baseline, added };
  };
  /** The baseline with some of the fixed prompt's added lines, where the fixed prompt has them. */
  const withLines = (keep: number[]) => {
    const { baseline, added } = lines();
    const out = [...baseline];
    out.splice(2, 0, ...keep.map((i) => added[i] as string));
    return out.join('\n');
  };

  it('adds three lines to the baseline', () => {
    expect(lines().added).toHaveLength(3);
    expect(withLines([0, 1, 2])).toBe(text.fixed.trim());
  });

  it('flips the outcome with the passenger line alone', async () => {
    await world.reset();
    const run = await world.runAgent({ agent: 'openai', env: { SYSTEM_PROMPT: withLines([0]) } });
    expect((await world.state()).db.bookings?.map((b) => b.passenger_id)).toEqual(['P-102']);
    expect(toolTrace(run)).not.toContain('get_booking');
  });

  it('does not flip it with the policy and verify lines alone, though the trajectory changes', async () => {
    await world.reset();
    const run = await world.runAgent({ agent: 'openai', env: { SYSTEM_PROMPT: withLines([1, 2]) } });
    expect((await world.state()).db.bookings?.map((b) => b.passenger_id)).toEqual(['P-100']);
    expect(toolTrace(run)).toEqual([
      'search_flights',
      'search_policies',
      'book_flight',
      'get_booking',
      'write_file',
      'save_note',
    ]);
  });
});
