// In-process tool() calls (the recorder's wrapper) are served from the recording by name and
// arguments: the tool function does not run again, and an unrecorded call is refused.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';

let tmp: string;
let agent: string;
let recorded: string;

const AGENT = `
const hook = globalThis[Symbol.for('tapedeck.recorder')];
let ran = 0;
const fn = async (args) => { ran++; return { flights: ['FL-' + args.to], stamp: Math.random() }; };
const lookup = (args) => (hook ? hook.tool('lookup_flights', fn, [args], { stateType: 'RETRIEVE' }) : fn(args));
let result;
try {
  result = await lookup({ to: process.env.DEST ?? 'DEN' });
} catch (error) {
  result = { error: error.message };
}
console.log(JSON.stringify({ result, ran }));
`;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-replay-tool-'));
  agent = path.join(tmp, 'agent.mjs');
  await writeFile(agent, AGENT);
  const rec = await recordCommand({ command: [process.execPath, agent], out: path.join(tmp, 'rec'), stdio: 'pipe' });
  expect(rec.exitCode).toBe(0);
  recorded = rec.dir;
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('in-process tools', () => {
  it('serves a recorded tool() call without running the tool again', async () => {
    const result = await replay({ recording: recorded, mode: 'exact', out: path.join(tmp, 'exact'), stdio: 'pipe' });
    const seen = JSON.parse(result.output?.stdout ?? '{}');
    expect(seen.ran).toBe(0);
    expect(seen.result.flights).toEqual(['FL-DEN']);
    expect(result.divergences).toEqual([]);
    expect(result.served.recording).toBe(1);
  });

  it('refuses a tool() call with arguments that were never recorded, naming the nearest one', async () => {
    const result = await replay({
      recording: recorded,
      mode: 'exact',
      env: { DEST: 'SFO' },
      out: path.join(tmp, 'miss'),
      stdio: 'pipe',
    });
    const seen = JSON.parse(result.output?.stdout ?? '{}');
    expect(seen.ran).toBe(0);
    expect(seen.result.error).toContain('lookup_flights');
    const miss = result.divergences.find((d) => d.kind === 'unmatched-request');
    expect(miss?.fieldDiff).toContainEqual({ path: 'body.to', expected: 'DEN', actual: 'SFO' });
  });
});
