// Each example agent (openai streaming and not, anthropic) under both prompts,
// on the embedded PGlite world: the end state of the database and the workspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentName, type PromptName, startWorld, type World } from '../../examples/world/index.js';
import { expectEndState, TRAJECTORIES, toolTrace } from './expect-world.js';

const AGENTS: Array<[AgentName, boolean]> = [
  ['openai', false],
  ['openai', true],
  ['anthropic', false],
];
// anthropic streaming runs in world.test.ts (under an interceptor) and agents-postgres.test.ts.
const PROMPTS: PromptName[] = ['baseline', 'fixed'];

describe('example agents on the PGlite world', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world?.stop();
  });

  for (const prompt of PROMPTS) {
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
    const { readFile } = await import('node:fs/promises');
    const { PROMPTS: files } = await import('../../examples/world/index.js');
    const fixedText = await readFile(files.fixed, 'utf8');
    const run = await world.runAgent({ agent: 'openai', prompt: 'baseline', env: { SYSTEM_PROMPT: fixedText } });
    expectEndState('fixed', run, await world.state());
  });
});
