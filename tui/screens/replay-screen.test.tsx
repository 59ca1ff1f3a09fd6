import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { render } from 'ink-testing-library';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RecordingEvent, ServedFrom } from '../../src/recording/index.js';
import { alignByPosition } from '../components/side-by-side.js';
import { alignOf } from '../data/engines.js';
import { indexSteps } from '../data/steps.js';
import { syntheticRecording } from '../data/synthetic.js';
import { createPromptEditor } from '../editor.js';
import type { ReplaySession } from '../hooks/use-replay.js';
import { KEY, press, waitForFrame } from '../testing.js';
import { ReplayScreen, type ReplayScreenProps } from './replay-screen.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-tui-replay-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const open: Array<{ unmount(): void }> = [];
afterEach(() => {
  for (const r of open.splice(0)) r.unmount();
});

const baseline = syntheticRecording({ steps: 12, name: 'base', system: 'Book only flights you have seen.' });
const baselineIndex = indexSteps(baseline);

function renderScreen(session: ReplaySession, extra: Partial<ReplayScreenProps> = {}) {
  const started: string[] = [];
  const gone: number[] = [];
  const r = render(
    <ReplayScreen
      baselineIndex={baselineIndex}
      baselineName="base"
      baselinePrompt="Book only flights you have seen."
      session={session}
      baselineScores={{ label: 'baseline' }}
      width={100}
      height={24}
      isActive
      onStart={(p) => started.push(p)}
      onReset={() => {}}
      onBack={() => {}}
      onGoto={(s) => gone.push(s)}
      onQuit={() => {}}
      onHelp={() => {}}
      {...extra}
    />,
  );
  open.push(r);
  return { ...r, frame: () => r.lastFrame() ?? '', started, gone };
}

describe('replay screen', () => {
  it("says whose prompt it is in a run of several agents, and how to pick another's", async () => {
    const r = renderScreen(
      { phase: 'idle' },
      { baselinePrompt: 'You are the forecaster.', promptStep: 3, promptAgents: 2 },
    );
    const frame = await waitForFrame(r.frame, 'Current system prompt (step 3):');
    expect(frame.replace(/\s+/g, ' ')).toContain("This run holds 2 agents' prompts: this is the agent of step 3");
    expect(frame).toContain('You are the forecaster.');
  });

  it('shows the current system prompt and starts a replay with a prompt loaded from a file', async () => {
    const file = join(tmp, 'fixed.txt');
    writeFileSync(file, 'Book only flights you have seen. Check the traveler first.');
    const r = renderScreen({ phase: 'idle' });
    await waitForFrame(r.frame, 'Book only flights you have seen.');
    await press(r.stdin, 'f');
    r.stdin.write(join(tmp, 'missing.txt'));
    await waitForFrame(r.frame, 'missing.txt▌');
    await press(r.stdin, KEY.enter);
    await waitForFrame(r.frame, 'ENOENT');
    expect(r.started).toEqual([]);
    await press(r.stdin, 'f');
    r.stdin.write(file);
    await waitForFrame(r.frame, `system prompt file: ${file}▌`);
    await press(r.stdin, KEY.enter);
    expect(r.started).toEqual(['Book only flights you have seen. Check the traveler first.']);
  });

  it('edits the prompt in $EDITOR and replays with the edited text', async () => {
    const replacement = join(tmp, 'edited.txt');
    writeFileSync(replacement, 'Edited prompt: read the traveler profile before booking.');
    const editPrompt = createPromptEditor(
      {
        stdin: new PassThrough() as unknown as NodeJS.ReadStream,
        stdout: new PassThrough() as unknown as NodeJS.WriteStream,
      },
      { EDITOR: `cp ${replacement}` },
    );
    const r = renderScreen({ phase: 'idle' }, { editPrompt });
    await waitForFrame(r.frame, 'e $EDITOR');
    await press(r.stdin, 'e');
    await waitForFrame(() => String(r.started.length), '1');
    expect(r.started).toEqual(['Edited prompt: read the traveler profile before booking.']);
  });

  it('says so when the editor leaves the prompt unchanged', async () => {
    const editPrompt = createPromptEditor(
      {
        stdin: new PassThrough() as unknown as NodeJS.ReadStream,
        stdout: new PassThrough() as unknown as NodeJS.WriteStream,
      },
      { EDITOR: 'true' },
    );
    const r = renderScreen({ phase: 'idle' }, { editPrompt });
    await press(r.stdin, 'e');
    await waitForFrame(r.frame, 'prompt unchanged: nothing to replay');
    expect(r.started).toEqual([]);
  });

  it('shows the replay progress', async () => {
    const r = renderScreen({
      phase: 'running',
      progress: [
        { text: 'step 1 · live · model answered as recorded at step 1', step: 1, total: 12 },
        { text: 'step 6 · live · POST /bookings -> 201', step: 6, total: 12 },
      ],
    });
    const f = await waitForFrame(r.frame, 'Replaying…');
    expect(f).toMatch(/\[#+\.+\] 6\/12/);
    expect(f).toContain('POST /bookings -> 201');
  });

  it('shows baseline and replay side by side with the first divergent step highlighted', async () => {
    const replay = syntheticRecording({ steps: 12, name: 'replay', toolSwitchAt: 5, replayOf: 'base' });
    const aligned = await alignOf(baseline, replay);
    const alignment = aligned.ok ? aligned.value : alignByPosition(baselineIndex, indexSteps(replay));
    const r = renderScreen({
      phase: 'done',
      outcome: { dir: '/tmp/replay', divergences: [], recording: replay },
      index: indexSteps(replay),
      alignment,
    });
    const f = await waitForFrame(r.frame, '» first divergence');
    expect(f).toMatch(/first divergence: baseline step 5 \/ replay step 5 \(other tool\)/);
    const row = f.split('\n').find((l) => /^»\s+\d/.test(l));
    // The replay's calls carry no exchange: its model calls went live, its tool calls were the
    // recording's, as the ledger counts them.
    expect(row).toMatch(/»\s+5 THINK.*→ search_flights.*│\s+5 live THINK.*→ cancel_book/);
    expect(f).toMatch(/\n\s+4 API_CALL .*│\s+4 rec\s+API_CALL/);
    await press(r.stdin, KEY.enter);
    expect(r.gone).toEqual([5]);
  });

  it('says what differs from the recorded run (an SDK version) under the summary, and still shows the divergence', async () => {
    const replay = syntheticRecording({ steps: 12, name: 'replay', toolSwitchAt: 5, replayOf: 'base' });
    const aligned = await alignOf(baseline, replay);
    const alignment = aligned.ok ? aligned.value : alignByPosition(baselineIndex, indexSteps(replay));
    const warnings = [
      'package versions differ from the recording: openai 4.0.0 → 5.1.0 (its requests may differ)',
      'the agent was recorded on Node v18.0.0 and runs on v20.20.2 here',
      'the redaction key (a) is not the one the recording was made with (b)',
    ];
    const r = renderScreen({
      phase: 'done',
      outcome: { dir: '/tmp/replay', divergences: [], recording: replay, warnings },
      index: indexSteps(replay),
      alignment,
    });
    const f = await waitForFrame(r.frame, '» first divergence');
    expect(f).toMatch(/warning: package versions differ from the recording: openai 4\.0\.0 → 5\.1\.0/);
    expect(f).toMatch(/warning: the agent was recorded on Node v18/);
    expect(f).toContain('… 1 more warning(s)');
    // The rows below still reach the first divergent step within the screen.
    expect(f.split('\n').find((l) => /^»\s+\d/.test(l))).toMatch(/»\s+5 THINK/);
    expect(f.split('\n').length).toBeLessThanOrEqual(24);
  });

  it('marks each replay step with where its answer came from', async () => {
    const replay = syntheticRecording({ steps: 12, name: 'replay', toolSwitchAt: 5, replayOf: 'base' });
    const served: Array<[number, ServedFrom]> = [
      [2, 'recording'],
      [4, 'sandbox'],
      [6, 'mock'],
      [8, 'simulated'],
      [10, 'blocked'],
      [12, 'recording'],
    ];
    for (const [stepId, servedFrom] of served)
      replay.events.push({
        seq: replay.events.length + 1,
        traceId: 'trace',
        stepId,
        type: 'http.exchange',
        time: '2026-11-24T10:00:00.000Z',
        payload: {
          exchangeId: `x${stepId}`,
          request: { method: 'GET', url: `http://127.0.0.1:8787/step/${stepId}`, headers: {} },
          startedAt: '2026-11-24T10:00:00.000Z',
          durationMs: 1,
          servedFrom,
        },
      } as RecordingEvent);
    const index = indexSteps(replay);
    const r = renderScreen({
      phase: 'done',
      outcome: { dir: '/tmp/replay', divergences: [], recording: replay },
      index,
      alignment: alignByPosition(baselineIndex, index),
    });
    const f = await waitForFrame(r.frame, 'answers:');
    expect(f).toContain('answers: 2 recorded, 1 sandbox, 1 mock, 1 simulated, 1 held back');
    const replaySide = (step: number) =>
      f
        .split('\n')
        .find((l) => new RegExp(`│\\s+${step} `).test(l))
        ?.split('│')[1] ?? '';
    expect(replaySide(2)).toMatch(/^\s+2 rec /);
    expect(replaySide(4)).toMatch(/^\s+4 sbx /);
    expect(replaySide(6)).toMatch(/^\s+6 mock /);
    expect(replaySide(8)).toMatch(/^\s+8 sim /);
    expect(replaySide(10)).toMatch(/^\s+10 held /);
    // A model call no exchange says anything of went live, as the ledger counts it.
    expect(replaySide(3)).toMatch(/^\s+3 live THINK/);
  });
});
