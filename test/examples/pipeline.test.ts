// The scenario documented in examples/README.md, checked on real recordings of the world: the
// recorder's steps match the table, belief-vs-world bisect of the baseline finds step 3, the
// fixed run has no bad step, and the two runs part at step 3.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentName, type PromptName, startWorld, type World } from '../../examples/world/index.js';
import { alignRuns, bisectBelief, builtinPredicate } from '../../src/bisect/index.js';
import { recordCommand } from '../../src/record/index.js';
import { type Recording, readRecording } from '../../src/recording/index.js';

let world: World;
let out: string;
const recordings: Partial<Record<PromptName, Recording>> = {};

async function recordRun(agent: AgentName, stream: boolean, prompt: PromptName): Promise<Recording> {
  await world.reset();
  const result = await recordCommand({
    command: world.agentCommand(agent, { stream }),
    env: world.agentEnv(prompt),
    fsRoot: world.workspace,
    dbUrl: world.dbUrl,
    dbSchemas: ['travel'],
    out: join(out, `${agent}-${prompt}`),
    name: `example ${agent} ${prompt}`,
    stdio: 'pipe',
  });
  expect(result.exitCode).toBe(0);
  return await readRecording(result.dir);
}

function stepTable(recording: Recording): string[] {
  return recording.events
    .filter((e) => e.type === 'step.started')
    .map((e) => `${e.stepId} ${(e.payload as { stateType: string }).stateType}`);
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'tapedeck-example-recordings-'));
  world = await startWorld();
  recordings.baseline = await recordRun('openai', true, 'baseline');
  recordings.fixed = await recordRun('anthropic', false, 'fixed');
});
afterAll(async () => {
  await world?.stop();
  if (out) await rm(out, { recursive: true, force: true });
});

describe('the example scenario, recorded', () => {
  it('has the documented steps under each prompt', () => {
    expect(stepTable(recordings.baseline!)).toEqual([
      '1 THINK',
      '2 API_CALL',
      '3 THINK',
      '4 API_CALL',
      '5 THINK',
      '6 FILE_WRITE',
      '7 THINK',
      '8 DB_QUERY',
      '9 FINALIZE',
    ]);
    expect(stepTable(recordings.fixed!)).toEqual([
      '1 THINK',
      '2 API_CALL',
      '3 THINK',
      '4 FILE_READ',
      '5 RETRIEVE',
      '6 THINK',
      '7 API_CALL',
      '8 THINK',
      '9 API_CALL',
      '10 THINK',
      '11 API_CALL',
      '12 THINK',
      '13 FILE_WRITE',
      '14 THINK',
      '15 DB_QUERY',
      '16 FINALIZE',
    ]);
  });

  it('puts the wrong-passenger booking row in step 4 of the baseline', () => {
    const changes = recordings.baseline!.events.filter((e) => e.type === 'db.changed' && e.stepId === 4);
    expect(JSON.stringify(changes.map((e) => e.payload))).toContain('P-100');
  });

  it('bisects the baseline to step 3, the THINK that invented passenger P-100', async () => {
    const result = await bisectBelief(recordings.baseline!, builtinPredicate('all'));
    expect(result.firstBad?.step).toBe(3);
    expect(result.firstBad?.stateType).toBe('THINK');
    expect(result.firstBad?.reason).toContain('P-100');
  });

  it('finds no bad step in the fixed run', async () => {
    const result = await bisectBelief(recordings.fixed!, builtinPredicate('all'));
    expect(result.firstBad).toBeUndefined();
  });

  it('aligns the two runs and parts them at step 3', () => {
    const alignment = alignRuns(recordings.baseline!, recordings.fixed!);
    expect(alignment.firstDivergence?.stepA).toBe(3);
  });
});
