// `tapedeck verify` reports intact recordings as ok and names the problem in a tampered one.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = join(import.meta.dirname, '../../bin/tapedeck.mjs');
const example = join(import.meta.dirname, '../../recordings/examples/openai-baseline');
const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-verify-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function verify(dir: string): Promise<{ code: number; out: unknown }> {
  try {
    const { stdout } = await run(process.execPath, [bin, 'verify', '--json', dir]);
    return { code: 0, out: JSON.parse(stdout) };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, out: JSON.parse(e.stdout) };
  }
}

describe('tapedeck verify', () => {
  it('reports a committed example recording as intact, with its step counts', async () => {
    const { code, out } = await verify(example);
    expect(code).toBe(0);
    // Made on another machine: intact, and not sealed by this one.
    expect(out).toMatchObject([{ ok: true, summary: { status: 'complete', sealedHere: false } }]);
    expect((out as Array<{ summary: { steps: number } }>)[0]?.summary.steps).toBeGreaterThan(0);
  });

  it('exits 1 and names events.jsonl when a recorded byte was changed', async () => {
    const copy = join(tmp, 'tampered');
    cpSync(example, copy, { recursive: true });
    const events = join(copy, 'events.jsonl');
    writeFileSync(events, readFileSync(events, 'utf8').replace('"model.called"', '"model.called" '));
    const { code, out } = await verify(copy);
    expect(code).toBe(1);
    expect(JSON.stringify(out)).toContain('events.jsonl');
  });
});
