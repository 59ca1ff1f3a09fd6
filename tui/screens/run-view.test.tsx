import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../app.js';
import { defaultServices } from '../data/engines.js';
import { syntheticRecording } from '../data/synthetic.js';
import { COLOR_CODE, KEY, press, waitForFrame } from '../testing.js';
import { colorFromEnv, makeTheme } from '../theme.js';

const services = defaultServices();
let quit = 0;
const open: Array<{ unmount(): void }> = [];
afterEach(() => {
  for (const r of open.splice(0)) r.unmount();
});

function renderRun(steps = 40, size = { width: 100, height: 30 }, color = true) {
  const recording = syntheticRecording({ steps, failAt: 6, divergeAt: [8], name: 'travel-run' });
  const r = render(
    <App services={services} recording={recording} {...size} color={color} worldDelayMs={0} onQuit={() => quit++} />,
  );
  open.push(r);
  return { ...r, frame: () => r.lastFrame() ?? '' };
}

describe('run view', () => {
  it('shows the timeline with state types, tools and failure marks, and the first step in detail', async () => {
    const r = renderRun();
    const f = await waitForFrame(r.frame, 'WORLD @ step 1 1 files');
    expect(f).toContain('travel-run');
    expect(f).toMatch(/▸\s+1 THINK\s+gpt-4o-mini/);
    expect(f).toMatch(/6 RETRIEVE .*✗/);
    expect(f).toMatch(/8 RETRIEVE .*≠/);
    expect(f).toContain('context [');
    expect(f).toContain('OUTPUT tool_calls');
    expect(f).toContain('→ search_flights');
  });

  it('steps forward and back with j/k and arrows; the detail and the world follow', async () => {
    const r = renderRun(40, { width: 150, height: 30 });
    await waitForFrame(r.frame, 'WORLD @ step 1 ');
    await press(r.stdin, 'j', 'j', 'j');
    let f = await waitForFrame(r.frame, /WORLD @ step 4 \d+ files/);
    expect(f).toContain('Step 4/40 API_CALL book_flight');
    expect(f).toContain('TOOL CALL http mutating');
    expect(f).toContain('+ out/booking-1.txt');
    expect(f).toContain('+ public.bookings {"id":1}');
    expect(f).toContain('public.bookings 1 rows');
    await press(r.stdin, KEY.up, KEY.up);
    f = await waitForFrame(r.frame, /WORLD @ step 2 \d+ files/);
    expect(f).toContain('public.bookings 0 rows');
    expect(f).toContain('OBSERVATION');
  });

  it('jumps to a step with g, digits and enter, and steps to failures with n', async () => {
    const r = renderRun(400);
    await waitForFrame(r.frame, 'WORLD @ step 1 ');
    await press(r.stdin, 'g', '2', '5', '0');
    await waitForFrame(r.frame, 'jump to step: 250');
    await press(r.stdin, KEY.enter);
    let f = await waitForFrame(r.frame, 'Step 250/400');
    expect(f).toMatch(/▸\s*250 /);
    expect(f).not.toMatch(/\s1 THINK/);
    await press(r.stdin, 'g');
    r.stdin.write('12\r'); // a fast typist's chunk
    await waitForFrame(r.frame, 'Step 12/400');
    await press(r.stdin, 'N');
    f = await waitForFrame(r.frame, 'Step 8/400');
    expect(f).toContain('DIVERGENCE ×1');
    expect(f).toContain('different-request');
    await press(r.stdin, 'N');
    f = await waitForFrame(r.frame, 'Step 6/400');
    expect(f).toContain('error HTTP_500');
  });

  it('renders only the visible window of a 10,000-step run', async () => {
    const r = renderRun(10_000, { width: 80, height: 23 });
    await waitForFrame(r.frame, 'Step 1/10000');
    await press(r.stdin, 'G');
    const f = await waitForFrame(r.frame, 'Step 10000/10000 FINALIZE');
    const lines = f.split('\n');
    expect(lines.length).toBeLessThanOrEqual(23);
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(f).toMatch(/▸\s*10000 FINALIZE/);
    expect(f).not.toContain(' 9900 ');
  });

  it('fits an 80x24 terminal with the keys in the footer', async () => {
    const r = renderRun(40, { width: 80, height: 23 });
    const f = await waitForFrame(r.frame, 'WORLD @ step 1');
    const lines = f.split('\n');
    expect(lines).toHaveLength(23);
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(lines.at(-1)).toContain('? help');
    expect(lines.at(-1)).toContain('q quit');
  });

  it('opens help with ? and closes it with any key; q quits', async () => {
    const r = renderRun();
    await waitForFrame(r.frame, 'WORLD @ step 1');
    await press(r.stdin, '?');
    const f = await waitForFrame(r.frame, 'g 42 enter');
    expect(f).toContain('bisect belief vs world');
    await press(r.stdin, 'x');
    await waitForFrame(r.frame, /WORLD @ step 1 \d+ files/);
    const before = quit;
    await press(r.stdin, 'q');
    expect(quit).toBe(before + 1);
  });

  it('shows the ledger panel with cost by state type and cache hit ratio', async () => {
    const r = renderRun();
    await waitForFrame(r.frame, 'WORLD @ step 1');
    await press(r.stdin, 'l');
    const f = await waitForFrame(r.frame, 'cost by state type');
    expect(f).toContain('── baseline');
    expect(f).toMatch(/cache hit \d+\.\d%/);
    expect(f).toMatch(/THINK\s+\$0\.\d+/);
    expect(f).toContain('hard gate');
  });

  it('asks for no colour at all when colour is off (NO_COLOR)', async () => {
    expect(colorFromEnv({ NO_COLOR: '1' })).toBe(false);
    expect(colorFromEnv({ NO_COLOR: '' })).toBe(true);
    expect(makeTheme(false).tint('bad')).toBeUndefined();
    expect(makeTheme(true).tint('bad')).toBe('red');
    const off = renderRun(40, { width: 100, height: 30 }, false);
    await waitForFrame(off.frame, 'WORLD @ step 1 1 files');
    await press(off.stdin, 'j', 'j', 'j', 'j', 'j', 'l');
    await waitForFrame(off.frame, 'cost by state type');
    expect(off.frame()).not.toMatch(COLOR_CODE);
  });
});

describe('run view edge cases', () => {
  it('opens a recording with no steps (an agent killed at once) without failing', async () => {
    const recording = syntheticRecording({ steps: 0, name: 'empty-run' });
    const r = render(<App services={services} recording={recording} width={80} height={23} worldDelayMs={0} />);
    open.push(r);
    const frame = () => r.lastFrame() ?? '';
    await waitForFrame(frame, 'step 0/0');
    await press(r.stdin, 'j', 'k', 'G', 'n', 'g', '5', KEY.enter, 'l');
    await waitForFrame(frame, 'cost by state type');
    await press(r.stdin, 'r');
    await waitForFrame(frame, '(no system prompt recorded)');
  });
});
