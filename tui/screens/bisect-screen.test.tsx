import { resolve } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Recording } from '../../src/recording/index.js';
import { App } from '../app.js';
import { defaultServices } from '../data/engines.js';
import { KEY, press, waitForFrame } from '../testing.js';
import { narrow, rangeBar } from './bisect-screen.js';

// A committed recording made by the recorder from the example world: the baseline prompt's agent
// books for a passenger it never looked up (examples/README.md: the belief diverges at step 3).
const EXAMPLE = resolve('recordings/examples/openai-baseline');
const services = defaultServices({ contract: resolve('examples/contracts/book-flight.yaml') });
let recording: Recording;
const open: Array<{ unmount(): void }> = [];

beforeAll(async () => {
  recording = await services.readRecording(EXAMPLE);
});
afterEach(() => {
  for (const r of open.splice(0)) r.unmount();
});

describe('bisect screen', () => {
  it('narrows the candidate range with each probe', () => {
    const steps = narrow(
      [
        { step: 9, verdict: 'bad' },
        { step: 4, verdict: 'bad' },
        { step: 2, verdict: 'good' },
        { step: 3, verdict: 'bad' },
      ],
      1,
      9,
    );
    expect(steps.map((s) => [s.lo, s.hi])).toEqual([
      [1, 9],
      [1, 4],
      [3, 4],
      [3, 3],
    ]);
    expect(rangeBar(3, 4, undefined, 1, 9, 9)).toBe('··══·····');
    expect(rangeBar(3, 4, 4, 1, 9, 9)).toBe('··═▲·····');
  });

  it('runs bisect from the run view, shows the search path and lands on the first bad step', async () => {
    const r = render(<App services={services} recording={recording} width={100} height={24} worldDelayMs={0} />);
    open.push(r);
    const frame = () => r.lastFrame() ?? '';
    await waitForFrame(frame, 'Step 1/9');
    await press(r.stdin, 'b');
    const f = await waitForFrame(frame, 'result: first bad step 3', 30_000);
    expect(f).toContain('steps 1..9');
    expect(f).toMatch(/step 9\s.*bad/);
    expect(f).toMatch(/step 3\s.*bad/);
    expect(f.replace(/\n\s*/g, '')).toContain('[grounding]');
    await press(r.stdin, KEY.enter);
    const run = await waitForFrame(frame, 'Step 3/9 THINK');
    expect(run).toMatch(/▸\s+3 THINK/);
  });
});

describe('run view on a recorded example', () => {
  it('shows recorded tool calls, the ledger provenance and the contract scores', async () => {
    const r = render(<App services={services} recording={recording} width={120} height={30} worldDelayMs={0} />);
    open.push(r);
    const frame = () => r.lastFrame() ?? '';
    // Tool steps are named after the agent's tool; the route is the detail.
    await waitForFrame(frame, /4 API_CALL\s+book_flight/);
    await press(r.stdin, 'j', 'j', 'j');
    const f = await waitForFrame(frame, /WORLD @ step 4 \d+ files/);
    expect(f).toContain('Step 4/9 API_CALL book_flight');
    expect(f).toContain('TOOL CALL http mutating via POST /bookings');
    expect(f).toContain('"passenger_id": "P-100"');
    expect(f).toMatch(/\+ travel\.bookings/);
    await press(r.stdin, 'l');
    const ledger = await waitForFrame(frame, /hard gate (PASS|FAIL)/, 30_000);
    expect(ledger).toContain('hard gate FAIL');
    expect(ledger).toMatch(/failures .*[A-Z_]{6,}/);
    expect(ledger).toMatch(/cache hit \d+\.\d% of input tokens/);
  });
});
