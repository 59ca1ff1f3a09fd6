// Running the example world twice gives byte-identical model-server logs and the same final
// database and workspace (the agent's random run id aside, which is there to be recorded).
import { describe, expect, it } from 'vitest';
import { startWorld, type WorldState } from '../../examples/world/index.js';

interface Outcome {
  logs: string[][];
  states: WorldState[];
  runIds: unknown[];
}

async function runWorldOnce(): Promise<Outcome> {
  const world = await startWorld();
  const out: Outcome = { logs: [], states: [], runIds: [] };
  try {
    for (const [agent, stream, prompt] of [
      ['openai', true, 'baseline'],
      ['anthropic', false, 'fixed'],
    ] as const) {
      await world.reset();
      const run = await world.runAgent({ agent, stream, prompt });
      expect(run.exitCode, run.stderr).toBe(0);
      out.logs.push(world.modelLog());
      const state = await world.state();
      for (const note of state.db.agent_notes ?? []) {
        out.runIds.push(note.run_id);
        note.run_id = '<random>';
      }
      out.states.push(state);
    }
  } finally {
    await world.stop();
  }
  return out;
}

describe('example world determinism', () => {
  it('gives byte-identical model logs and the same end state when run twice', async () => {
    const first = await runWorldOnce();
    const second = await runWorldOnce();
    expect(first.logs[0]?.length).toBe(5);
    expect(first.logs[1]?.length).toBe(8);
    expect(second.logs.map((l) => l.join('\n'))).toEqual(first.logs.map((l) => l.join('\n')));
    expect(second.states).toEqual(first.states);
    // The one nondeterministic value differs between runs: a recorder has something to capture.
    expect(second.runIds).not.toEqual(first.runIds);
  });
});
