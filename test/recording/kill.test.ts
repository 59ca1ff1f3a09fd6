// A writer in a real child process, SIGKILLed mid-run: the recording reads back as incomplete
// with every flushed step intact.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bodyText, type Recording, readRecording } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

const CHILD = fileURLToPath(new URL('./fixtures/kill-child.ts', import.meta.url));

/** Starts the child, waits until its stdout shows `until`, then SIGKILLs it. */
async function runAndKill(dir: string, steps: string, until: RegExp): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, steps], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (until.test(out)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before ${until}: ${err}`)));
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return out;
}

function stepsOf(rec: Recording): Map<number, string[]> {
  const steps = new Map<number, string[]>();
  for (const e of rec.events) {
    if (e.stepId === 0) continue;
    steps.set(e.stepId, [...(steps.get(e.stepId) ?? []), e.type]);
  }
  return steps;
}

describe('a writer killed mid-run', () => {
  it('leaves an incomplete recording with every flushed step intact and nothing of the unflushed one', async () => {
    const dir = join(tempDir(), 'killed');
    await runAndKill(dir, '5', /waiting\n/);
    const rec = await readRecording(dir);
    expect(rec.manifest.status).toBe('incomplete');
    expect(rec.warnings.join('\n')).toMatch(/incomplete/);
    expect(rec.events[0]?.type).toBe('run.started');
    const steps = stepsOf(rec);
    expect([...steps.keys()]).toEqual([1, 2, 3, 4, 5]);
    for (const types of steps.values()) {
      expect(types).toEqual(['step.started', 'tool.called', 'fs.changed', 'step.completed']);
    }
    // Step 3's file content went to a blob before the kill; it reads back verified.
    const step3 = rec.events.find((e) => e.stepId === 3 && e.type === 'tool.called');
    if (step3?.type !== 'tool.called') throw new Error('step 3 has no tool.called');
    expect(bodyText(rec, step3.payload.resultBody)).toBe('file 3\n'.repeat(1000));
  });

  it('flushes buffered events when the process exits without closing the writer', async () => {
    const dir = join(tempDir(), 'exited');
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, 'exit'], { stdio: 'ignore' });
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    const rec = await readRecording(dir);
    expect(rec.manifest.status).toBe('incomplete');
    expect([...stepsOf(rec).values()]).toEqual([
      ['step.started', 'tool.called', 'fs.changed', 'step.completed'],
      ['step.started', 'tool.called', 'fs.changed'],
    ]);
  });

  it('reads back whatever was flushed when killed at an arbitrary moment of a busy run', async () => {
    const dir = join(tempDir(), 'busy');
    await runAndKill(dir, 'forever', /flushed 200\n/);
    const rec = await readRecording(dir);
    expect(rec.manifest.status).toBe('incomplete');
    const steps = stepsOf(rec);
    expect(steps.size).toBeGreaterThanOrEqual(200);
    const complete = [...steps.entries()].filter(([, types]) => types.includes('step.completed'));
    expect(complete.length).toBeGreaterThanOrEqual(200);
    for (const [, types] of complete) {
      expect(types).toEqual(['step.started', 'tool.called', 'fs.changed', 'step.completed']);
    }
  });
});
