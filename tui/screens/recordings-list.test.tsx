import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeRecording } from '../../test/tui/write-recording.js';
import { App } from '../app.js';
import { defaultServices } from '../data/engines.js';
import { syntheticRecording } from '../data/synthetic.js';
import { KEY, press, waitForFrame } from '../testing.js';

let root: string;
const open: Array<{ unmount(): void }> = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'tapedeck-tui-list-'));
  await writeRecording(syntheticRecording({ steps: 12, name: 'alpha-booking' }), join(root, 'alpha-booking'));
  await writeRecording(syntheticRecording({ steps: 7, name: 'beta-search', failAt: 4 }), join(root, 'beta-search'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  for (const r of open.splice(0)) r.unmount();
});

function renderList(onQuit = () => {}) {
  const r = render(
    <App services={defaultServices()} root={root} width={100} height={20} worldDelayMs={0} onQuit={onQuit} />,
  );
  open.push(r);
  return { ...r, frame: () => r.lastFrame() ?? '' };
}

describe('recordings list', () => {
  it('lists recordings with agent, date, steps, status and cost', async () => {
    const r = renderList();
    const f = await waitForFrame(
      r.frame,
      (f) => /alpha-booking.*12 complete/.test(f) && /beta-search.*7 failed/.test(f),
    );
    expect(f).toContain('name');
    expect(f).toContain('agent.mjs');
    expect(f).toContain('2026-11-24 10:00');
    expect(f).toMatch(/alpha-booking.*\$0\.\d+/);
    expect(f).toContain('2/2');
  });

  it('filters by typing, clears with esc, and opens the selected run with enter', async () => {
    const r = renderList();
    await waitForFrame(r.frame, /beta-search.*7 failed/);
    await press(r.stdin, 'b', 'e', 't');
    let f = await waitForFrame(r.frame, 'filter: bet▌');
    expect(f).toContain('beta-search');
    expect(f).not.toContain('alpha-booking');
    expect(f).toContain('1/2');
    await press(r.stdin, KEY.backspace, KEY.backspace, KEY.backspace, 'z', 'q');
    f = await waitForFrame(r.frame, 'filter: zq▌');
    expect(f).toContain('nothing matches "zq"');
    await press(r.stdin, KEY.escape);
    await waitForFrame(r.frame, (f) => f.includes('alpha-booking') && f.includes('beta-search'));
    await press(r.stdin, 'a', 'l', 'p', KEY.enter);
    f = await waitForFrame(r.frame, 'Step 1/12');
    expect(f).toContain('tapedeck alpha-booking');
    await press(r.stdin, KEY.escape);
    await waitForFrame(r.frame, 'recordings in');
  });

  it('quits with q when the filter is empty', async () => {
    let quits = 0;
    const r = renderList(() => quits++);
    await waitForFrame(r.frame, 'alpha-booking');
    await press(r.stdin, 'q');
    expect(quits).toBe(1);
  });

  it('says how to make a recording when the folder has none', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tapedeck-tui-empty-'));
    try {
      const r = render(<App services={defaultServices()} root={empty} width={100} height={20} />);
      open.push(r);
      await waitForFrame(() => r.lastFrame(), `no recordings under ${empty}`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
