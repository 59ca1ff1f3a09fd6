// The real `tapedeck tui` in a real terminal (tmux): time travel through a committed example
// recording, replay it with a changed prompt, see the divergence, bisect, quit.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasTmux, openTerminal, sh, type Terminal } from './tmux.js';

const ROOT = resolve('.');
const EXAMPLE = join(ROOT, 'recordings/examples/openai-baseline');
const FIXED_PROMPT = join(ROOT, 'examples/prompts/fixed.txt');
const CONTRACT = join(ROOT, 'examples/contracts/book-flight.yaml');
// Starting tsx and reading the recording on a loaded 2-core machine can take a while: wait for
// screens, never for fixed times.
const SLOW = 90_000;

const terminals: Terminal[] = [];
let work: string;
let modelServer: { url: string; close(): Promise<void> } | undefined;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'tapedeck-tui-e2e-'));
  // A copy: the replay recording is written next to the baseline, inside this temp folder.
  cpSync(EXAMPLE, join(work, 'openai-baseline'), { recursive: true });
  if (existsSync(join(ROOT, 'examples/world/index.ts'))) {
    // The example world's deterministic FAKE model server answers the replay's model calls.
    const world = (await import('../../examples/world/index.js')) as {
      startModelServer(): Promise<{ url: string; close(): Promise<void> }>;
    };
    modelServer = await world.startModelServer();
  }
});

afterAll(async () => {
  for (const t of terminals) t.kill();
  await modelServer?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Runs `tapedeck tui <args>` (or a bare `tapedeck` when args is null) in a new terminal. */
function start(args: string[] | null, size: [number, number], env: Record<string, string> = {}): Terminal {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${sh(v)}`);
  const cli = args === null ? '' : `tui ${args.map(sh).join(' ')}`;
  const command = `cd ${sh(ROOT)} && env ${vars.join(' ')} node bin/tapedeck.mjs ${cli}; echo "TAPEDECK-EXITED $?"; sleep 600`;
  const term = openTerminal(command, size[0], size[1]);
  terminals.push(term);
  return term;
}

describe.skipIf(!hasTmux())('tapedeck tui in a real terminal', () => {
  it('time-travels through a recording, replays it with a changed prompt, bisects and quits', async () => {
    // A committed example, made elsewhere: its replay (r) runs its command only when trusted.
    const args = [join(work, 'openai-baseline'), '--contract', CONTRACT, '--trust-recording'];
    if (modelServer) args.push('--model-endpoint', modelServer.url);
    // CI=true: ink alone would draw nothing until exit there; the TUI must draw anyway.
    const t = start(args, [120, 40], { CI: 'true' });

    await t.waitFor('Step 1/', SLOW);
    t.keys('j');
    await t.waitFor(/Step 2\/\d+ API_CALL search_flights/, SLOW);
    t.keys('j', 'j');
    let screen = await t.waitFor(/Step 4\/\d+ API_CALL book_flight[\s\S]*WORLD @ step 4 \d+ files/, SLOW);
    expect(screen).toContain('via POST /bookings');
    expect(screen).toMatch(/▸\s+4 API_CALL/);
    expect(screen).toMatch(/\+ travel\.bookings/);
    const rowsAt4 = Number(/travel\.bookings (\d+) rows/.exec(screen)?.[1]);

    // Back in time: the world follows.
    t.keys('k', 'k', 'k');
    screen = await t.waitFor(/Step 1\/\d+[\s\S]*WORLD @ step 1 \d+ files/, SLOW);
    const rowsAt1 = Number(/travel\.bookings (\d+) rows/.exec(screen)?.[1]);
    expect(rowsAt1).toBe(rowsAt4 - 1);

    // Jump to a step.
    t.keys('g');
    await t.waitFor('jump to step:', SLOW);
    t.type('7');
    t.keys('Enter');
    await t.waitFor('Step 7/', SLOW);

    if (modelServer) {
      t.keys('r');
      await t.waitFor('Replay with a changed system prompt', SLOW);
      t.keys('f');
      await t.waitFor('system prompt file:', SLOW);
      t.type(FIXED_PROMPT);
      await t.waitFor('fixed.txt▌', SLOW);
      t.keys('Enter');
      screen = await t.waitFor('Replay done', 180_000);
      expect(screen).toMatch(/» first divergence: baseline step 3 \/ replay step 3/);
      // The replay side marks each step with its answer's provenance (the model's third call went live).
      expect(screen).toMatch(/^»\s+3 THINK .*│\s+3 live THINK/m);
      expect(screen).toMatch(/answers: \d+ recorded, \d+ live/);
      t.keys('Escape');
      await t.waitFor('Step 7/', SLOW);
    } else {
      console.warn('tui e2e: the replay step is skipped (the example world is not available)');
    }

    t.keys('b');
    screen = await t.waitFor('result: first bad step 3', SLOW);
    expect(screen).toMatch(/step 9\s.*bad/);
    t.keys('Enter');
    await t.waitFor(/Step 3\/\d+ THINK[\s\S]*▸\s+3 THINK/, SLOW);

    t.keys('q');
    await t.waitFor('TAPEDECK-EXITED 0', SLOW);
  }, 600_000);

  it('lists recordings in an 80x24 terminal without colour when NO_COLOR is set', async () => {
    const listDir = join(work, 'list');
    cpSync(EXAMPLE, join(listDir, 'openai-baseline'), { recursive: true });
    const t = start(['--dir', listDir], [80, 24], { NO_COLOR: '1' });
    let screen = await t.waitFor(/openai-baseline\s.*\s\d+ complete/, SLOW);
    const lines = screen.split('\n');
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(screen).toMatch(/q quit/);
    expect(t.screen(true)).not.toMatch(/\x1b\[(3[0-8]|9[0-7])(;[0-9;]*)?m/);
    t.type('openai-base');
    await t.waitFor('filter: openai-base▌', SLOW);
    t.keys('Enter');
    screen = await t.waitFor('Step 1/', SLOW);
    expect(screen.split('\n').every((l) => l.length <= 80)).toBe(true);
    expect(t.screen(true)).not.toMatch(/\x1b\[(3[0-8]|9[0-7])(;[0-9;]*)?m/);
    t.keys('?');
    await t.waitFor('g 42 enter', SLOW);
    t.keys('Escape');
    await t.waitFor('Step 1/', SLOW);
    t.keys('q');
    await t.waitFor('TAPEDECK-EXITED 0', SLOW);
  }, 600_000);

  it('draws in colour when NO_COLOR is not set', async () => {
    const t = start([join(work, 'openai-baseline')], [100, 30], { FORCE_COLOR: '1' });
    await t.waitFor('Step 1/', SLOW);
    expect(t.screen(true)).toMatch(/\x1b\[(3[0-8]|9[0-7])(;[0-9;]*)?m/);
    t.keys('q');
    await t.waitFor('TAPEDECK-EXITED 0', SLOW);
  }, 600_000);

  it('opens the recordings list for a bare `tapedeck`', async () => {
    const t = start(null, [100, 20]);
    await t.waitFor('tapedeck recordings in recordings', SLOW);
    t.keys('q');
    await t.waitFor('TAPEDECK-EXITED 0', SLOW);
  }, 300_000);

  it('explains a missing recording and exits non-zero', async () => {
    const t = start([join(work, 'no-such-recording')], [100, 20]);
    const screen = await t.waitFor('TAPEDECK-EXITED', SLOW);
    expect(screen).toContain('no recording at');
    expect(screen).toMatch(/TAPEDECK-EXITED [1-9]/);
  }, 300_000);
});
