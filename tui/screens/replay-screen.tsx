// Replay with a changed prompt: edit the system prompt in $EDITOR (or load a file), watch the
// counterfactual replay progress, then read baseline and replay side by side with the first
// divergent step highlighted.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { useRef, useState } from 'react';
import { answerProvenance, describeProvenance } from '../../src/recording/index.js';
import { bodyHeight, Frame, type KeyHelp } from '../components/frame.js';
import { LedgerPanel, type RunScores } from '../components/ledger-panel.js';
import { type Line, Lines, plain, seg } from '../components/lines.js';
import { firstDivergentPair, sideBySideLines } from '../components/side-by-side.js';
import type { ReplayOutcome } from '../data/engines.js';
import { wrapLines } from '../data/format.js';
import type { StepIndex } from '../data/steps.js';
import { useKeys } from '../hooks/use-keys.js';
import type { ReplaySession } from '../hooks/use-replay.js';

export interface ReplayScreenProps {
  baselineIndex: StepIndex;
  baselineName: string;
  baselinePrompt?: string;
  /** The step whose model call carried baselinePrompt (default 1). */
  promptStep?: number;
  /** How many agents' prompts the run holds: with more than one, the screen says whose this is. */
  promptAgents?: number;
  session: ReplaySession;
  baselineScores: RunScores;
  /** Where the replay's model calls go, for the user to see. */
  modelEndpoint?: string;
  width: number;
  height: number;
  isActive: boolean;
  /** Opens the text in $EDITOR and resolves with the edited text (undefined when unchanged or cancelled). */
  editPrompt?: (text: string) => Promise<string | undefined>;
  onStart(systemPrompt: string): void;
  onReset(): void;
  onBack(): void;
  /** Go to a baseline step in the run view. */
  onGoto(stepId: number): void;
  onQuit(): void;
  onHelp(): void;
}

function progressBar(step: number | undefined, total: number | undefined, width: number): string {
  if (step === undefined || !total) return '';
  const cells = Math.max(4, width);
  const done = Math.min(cells, Math.round((step / total) * cells));
  return `[${'#'.repeat(done)}${'.'.repeat(cells - done)}] ${step}/${total}`;
}

export function ReplayScreen(props: ReplayScreenProps) {
  const { session, width, height } = props;
  const [path, setPathState] = useState<string | null>(null);
  // A typed or pasted path arrives many keys to a chunk: accumulate through a ref.
  const pathRef = useRef<string | null>(null);
  const setPath = (value: string | null) => {
    pathRef.current = value;
    setPathState(value);
  };
  const [message, setMessage] = useState<string | undefined>();
  const [offset, setOffset] = useState<number | undefined>();
  const [showLedger, setShowLedger] = useState(false);
  const body = bodyHeight(height);

  const done = session.phase === 'done' ? session : undefined;
  const first = done ? firstDivergentPair(done.alignment) : -1;
  const top = offset ?? Math.max(0, first - 3);

  const edit = async () => {
    if (!props.editPrompt) {
      setMessage('no editor: set $EDITOR, or press f to load a file');
      return;
    }
    try {
      const text = await props.editPrompt(props.baselinePrompt ?? '');
      if (text === undefined) setMessage('prompt unchanged: nothing to replay');
      else {
        setMessage(undefined);
        props.onStart(text);
      }
    } catch (error) {
      setMessage(`editor failed: ${(error as Error).message}`);
    }
  };

  useKeys(
    (input, key) => {
      const path = pathRef.current;
      if (path !== null) {
        if (key.return) {
          try {
            const text = readFileSync(resolve(path), 'utf8');
            setPath(null);
            setMessage(undefined);
            setOffset(undefined);
            props.onStart(text);
          } catch (error) {
            setPath(null);
            setMessage(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
          }
        } else if (key.escape) setPath(null);
        else if (key.backspace || key.delete) setPath(path.slice(0, -1));
        else if (input && !key.ctrl && !key.meta) setPath(path + input);
        return;
      }
      if (input === 'q') return props.onQuit();
      if (input === '?') return props.onHelp();
      if (key.escape) return props.onBack();
      if (session.phase === 'idle' || session.phase === 'failed') {
        if (input === 'e') void edit();
        else if (input === 'f') setPath('');
        else if (input === 'n' && session.phase === 'failed') props.onReset();
        return;
      }
      if (done) {
        const max = Math.max(0, done.alignment.pairs.length - (body - 3 - warningLines(done.outcome).length));
        if (input === 'j' || key.downArrow) setOffset(Math.min(max, top + 1));
        else if (input === 'k' || key.upArrow) setOffset(Math.max(0, top - 1));
        else if (key.pageDown || input === ' ') setOffset(Math.min(max, top + body - 4));
        else if (key.pageUp) setOffset(Math.max(0, top - body + 4));
        else if (input === 'l') setShowLedger(!showLedger);
        else if (input === 'n') {
          setOffset(undefined);
          props.onReset();
        } else if (key.return) {
          const step = done.alignment.firstDivergence?.baseline;
          if (step !== undefined) props.onGoto(step);
        }
      }
    },
    { isActive: props.isActive },
  );

  const lines: Line[] = [];
  let keys: KeyHelp;
  if (session.phase === 'idle' || session.phase === 'failed') {
    keys = [
      ['e', '$EDITOR'],
      ['f', 'prompt file'],
      ['esc', 'back'],
      ['?', 'help'],
      ['q', 'quit'],
    ];
    lines.push([seg('Replay with a changed system prompt', { bold: true })]);
    lines.push([
      seg('Counterfactual: model calls go to the model, tools are served from the recording.', { tint: 'muted' }),
    ]);
    lines.push([
      seg('model endpoint: ', { tint: 'muted' }),
      seg(props.modelEndpoint ?? 'the host each recorded call named (--model-endpoint URL to change)', {
        tint: 'muted',
      }),
    ]);
    if (session.phase === 'failed') lines.push([seg(`replay failed: ${session.reason}`, { tint: 'bad' })]);
    lines.push(plain(''));
    lines.push([seg(`Current system prompt (step ${props.promptStep ?? 1}):`, { bold: true })]);
    if ((props.promptAgents ?? 1) > 1) {
      const hint = `This run holds ${props.promptAgents} agents' prompts: this is the agent of step ${props.promptStep ?? 1}; the others' calls go out as recorded. To change another agent's: esc, move to one of its steps, r.`;
      for (const l of wrapLines(hint, width - 2, 3)) lines.push([seg(`  ${l}`, { tint: 'muted' })]);
    }
    const prompt = props.baselinePrompt ?? '(no system prompt recorded)';
    lines.push(...wrapLines(prompt, width - 2, Math.max(1, body - lines.length - 1)).map((l) => plain(`  ${l}`)));
  } else if (session.phase === 'running') {
    keys = [
      ['esc', 'back (replay keeps running)'],
      ['q', 'quit'],
    ];
    const last = session.progress.at(-1);
    lines.push([
      seg('Replaying… ', { bold: true }),
      seg(progressBar(last?.step, last?.total ?? props.baselineIndex.rows.length, Math.min(40, width - 20))),
    ]);
    lines.push(plain(''));
    if (session.progress.length === 0) lines.push([seg('  starting the agent in the sandbox…', { tint: 'muted' })]);
    for (const p of session.progress.slice(-(body - 3))) lines.push([seg(`  ${p.text}`, { tint: 'muted' })]);
  } else {
    const d = session as Extract<ReplaySession, { phase: 'done' }>;
    keys = [
      ['jk', 'scroll'],
      ['enter', 'go to divergence'],
      ['l', 'ledger'],
      ['n', 'new replay'],
      ['esc', 'back'],
      ['q', 'quit'],
    ];
    const fd = d.alignment.firstDivergence;
    const o = d.outcome;
    lines.push([
      seg('Replay done ', { bold: true }),
      seg(
        o.status ? `(${o.status}${o.exitCode ? `, exit ${o.exitCode}` : ''}) ` : '',
        o.status === 'failed' ? { tint: 'bad' } : {},
      ),
      seg(
        `${o.divergences.length} divergence event(s) · ${o.heldBack ? `${o.heldBack} held back · ` : ''}${d.index.rows.length} steps vs ${props.baselineIndex.rows.length}`,
      ),
    ]);
    const answers = answerProvenance(o.recording).counts;
    const unsound = answers.simulated + answers.blocked;
    lines.push([
      seg('answers: ', { bold: true }),
      seg(describeProvenance(answers) || 'none', unsound > 0 ? { tint: 'warn' } : {}),
      seg('  (rec sbx mock sim live held)', { tint: 'muted' }),
    ]);
    lines.push(
      fd
        ? [
            seg('» first divergence: ', { bold: true, tint: 'diverge' }),
            seg(`baseline step ${fd.baseline ?? '—'} / replay step ${fd.replay ?? '—'} (${fd.kind})`),
          ]
        : [seg('no divergence: the replay took the same steps', { tint: 'good' })],
    );
    lines.push(...warningLines(o));
    if (showLedger) {
      return (
        <Frame
          title={titleOf(props)}
          status={[seg(d.outcome.dir, { tint: 'muted' })]}
          keys={keys}
          width={width}
          height={height}
        >
          <LedgerPanel
            runs={[
              props.baselineScores,
              {
                label: 'replay',
                ...(d.ledger ? { ledger: d.ledger } : {}),
                ...(d.score ? { score: d.score } : {}),
              },
            ]}
            width={width}
            height={body}
          />
        </Frame>
      );
    }
    lines.push(...sideBySideLines(props.baselineIndex, d.index, d.alignment, top, body - lines.length, width));
  }
  const status: Line =
    path !== null
      ? [
          seg('system prompt file: ', { bold: true }),
          seg(`${path}▌`),
          seg('  (enter load, esc cancel)', { tint: 'muted' }),
        ]
      : message
        ? [seg(message, { tint: 'warn' })]
        : done?.alignmentNote
          ? [seg(`aligned by position: ${done.alignmentNote}`, { tint: 'muted' })]
          : [];
  return (
    <Frame title={titleOf(props)} status={status} keys={keys} width={width} height={height}>
      <Lines lines={lines} width={width} height={body} />
    </Frame>
  );
}

/**
 * What differs from the recorded run (an SDK's version, say), which may be why it diverged: said
 * under the summary, as `tapedeck replay` says it before the run. Two at most, then a count.
 */
function warningLines(o: ReplayOutcome): Line[] {
  const warnings = o.warnings ?? [];
  const lines: Line[] = warnings.slice(0, 2).map((w) => [seg('warning: ', { bold: true, tint: 'warn' }), seg(w)]);
  if (warnings.length > 2) lines.push([seg(`  … ${warnings.length - 2} more warning(s)`, { tint: 'muted' })]);
  return lines;
}

function titleOf(props: ReplayScreenProps): Line {
  return [seg('tapedeck ', { bold: true, tint: 'accent' }), seg(`replay ${props.baselineName} with a changed prompt`)];
}
