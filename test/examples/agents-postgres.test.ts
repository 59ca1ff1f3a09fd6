// The same agents and prompts against a real Postgres server (TAPEDECK_PG_URL), in a uniquely
// named database that is dropped afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentName, type PromptName, startWorld, type World } from '../../examples/world/index.js';
import { expectEndState, TRAJECTORIES, toolTrace } from './expect-world.js';

const url = process.env.TAPEDECK_PG_URL;
const AGENTS: Array<[AgentName, boolean]> = [
  ['openai', false],
  ['openai', true],
  ['anthropic', true],
];

describe.skipIf(!url)('example agents on a real Postgres server', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld({ db: url as string, freshDatabase: true });
  });
  afterAll(async () => {
    await world?.stop();
  });

  it('runs in its own database on that server', () => {
    expect(world.dbKind).toBe('postgres');
    expect(new URL(world.dbUrl).pathname).toMatch(/^\/travel_[0-9a-f]{12}$/);
  });

  for (const prompt of ['baseline', 'fixed'] as PromptName[]) {
    for (const [agent, stream] of AGENTS) {
      it(`${agent} (${stream ? 'streaming' : 'non-streaming'}) under the ${prompt} prompt`, async () => {
        await world.reset();
        const run = await world.runAgent({ agent, stream, prompt });
        expectEndState(prompt, run, await world.state());
        expect(toolTrace(run)).toEqual(TRAJECTORIES[prompt]);
      });
    }
  }
});
