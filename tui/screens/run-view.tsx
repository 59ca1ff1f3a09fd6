// The run view: the timeline of steps on the left, the selected step (or the ledger) on the
// right. Moving the selection is time travel: the detail and the world follow the step.
import { Box } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { Recording } from '../../src/recording/index.js';
import { DetailPane } from '../components/detail.js';
import { bodyHeight, Frame, type KeyHelp } from '../components/frame.js';
import { LedgerPanel, type RunScores } from '../components/ledger-panel.js';
import { type Line, seg } from '../components/lines.js';
import { markOf, scrollOffset, Timeline } from '../components/timeline.js';
import type { Available, LedgerView, TuiServices, WorldSummary } from '../data/engines.js';
import { type StepIndex, stepDetail } from '../data/steps.js';
import { useKeys } from '../hooks/use-keys.js';

export interface RunViewProps {
  recording: Recording;
  index: StepIndex;
  services: TuiServices;
  width: number;
  height: number;
  /** Position of the selected step in index.rows. */
  pos: number;
  onPos(pos: number): void;
  ledger?: Available<LedgerView>;
  /** Runs for the ledger panel: the baseline, and the replay when there is one. */
  scores: RunScores[];
  highlight?: number;
  /** A note for the title line (e.g. a replay running in the background). */
  note?: string;
  isActive: boolean;
  onBack?: () => void;
  onQuit(): void;
  onHelp(): void;
  onReplay(): void;
  onBisect(): void;
  /** Delay before the world at the selected step is computed, so fast scrolling stays fast. */
  worldDelayMs?: number;
}

/** Timeline width: most of a narrow terminal, at most 64 columns of a wide one. */
export function timelineWidth(width: number): number {
  return width < 100 ? Math.floor(width * 0.55) : Math.min(64, Math.max(56, Math.floor(width * 0.45)));
}

/** The position of `stepId`, or of the nearest step after it (the last when past the end). */
export function positionOfStep(index: StepIndex, stepId: number): number {
  const exact = index.positionOf.get(stepId);
  if (exact !== undefined) return exact;
  const found = index.rows.findIndex((r) => r.stepId >= stepId);
  return found === -1 ? index.rows.length - 1 : found;
}

const KEYS: KeyHelp = [
  ['jk', 'step'],
  ['g', 'jump'],
  ['n', 'mark'],
  ['l', 'ledger'],
  ['r', 'replay'],
  ['b', 'bisect'],
  ['esc', 'list'],
  ['?', 'help'],
  ['q', 'quit'],
];

export function RunView(props: RunViewProps) {
  const { recording, index, width, height, pos } = props;
  const [jump, setJumpState] = useState<string | null>(null);
  // Keys can arrive several to a chunk (typing fast, tmux send-keys): read and write through refs
  // so each key sees the effect of the one before it, not the last render's state.
  const jumpRef = useRef<string | null>(null);
  const setJump = (value: string | null) => {
    jumpRef.current = value;
    setJumpState(value);
  };
  const posRef = useRef(pos);
  posRef.current = pos;
  const [panel, setPanel] = useState<'detail' | 'ledger'>('detail');
  const [world, setWorld] = useState<{ step: number; value: Available<WorldSummary> } | undefined>();
  const offset = useRef(0);
  const rows = index.rows;
  const body = bodyHeight(height);
  const tlWidth = timelineWidth(width);
  const page = Math.max(1, body - 2);
  const row = rows[pos];

  useEffect(() => {
    if (!row) return;
    let live = true;
    const step = row.stepId;
    const timer = setTimeout(() => {
      props.services.worldAt(recording, step).then((value) => {
        if (live) setWorld({ step, value });
      });
    }, props.worldDelayMs ?? 40);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [row, recording, props.services, props.worldDelayMs]);

  const move = (to: number) => {
    posRef.current = Math.max(0, Math.min(rows.length - 1, to));
    props.onPos(posRef.current);
  };
  const nextMark = (dir: 1 | -1) => {
    for (let i = posRef.current + dir; i >= 0 && i < rows.length; i += dir) {
      if (markOf(rows[i] as (typeof rows)[number]) !== ' ') return move(i);
    }
  };

  useKeys(
    (input, key) => {
      const jump = jumpRef.current;
      const pos = posRef.current;
      if (jump !== null) {
        if (key.return) {
          if (jump) move(positionOfStep(index, Number.parseInt(jump, 10)));
          setJump(null);
        } else if (key.escape) setJump(null);
        else if (key.backspace || key.delete) setJump(jump.slice(0, -1));
        else if (/^[0-9]+$/.test(input)) setJump(jump + input);
        return;
      }
      if (input === 'j' || key.downArrow) move(pos + 1);
      else if (input === 'k' || key.upArrow) move(pos - 1);
      else if (key.pageDown || input === ' ' || (key.ctrl && input === 'd')) move(pos + page);
      else if (key.pageUp || (key.ctrl && input === 'u')) move(pos - page);
      else if (key.home) move(0);
      else if (key.end || input === 'G') move(rows.length - 1);
      else if (input === 'g') setJump('');
      else if (input === 'n') nextMark(1);
      else if (input === 'N') nextMark(-1);
      else if (input === 'l') setPanel(panel === 'ledger' ? 'detail' : 'ledger');
      else if (input === 'r') props.onReplay();
      else if (input === 'b') props.onBisect();
      else if (input === '?') props.onHelp();
      else if (input === 'q') props.onQuit();
      else if (key.escape && props.onBack) props.onBack();
    },
    { isActive: props.isActive },
  );

  offset.current = scrollOffset(pos, offset.current, body - 1, rows.length);
  const m = recording.manifest;
  const title: Line = [
    seg('tapedeck ', { bold: true, tint: 'accent' }),
    seg(`${m.name} `, { bold: true }),
    seg(`${m.replayOf ? `replay of ${m.replayOf} · ` : ''}${m.status} · step ${row?.stepId ?? 0}/${rows.length}`),
    ...(props.note ? [seg(`  ${props.note}`, { tint: 'warn' })] : []),
  ];
  let status: Line;
  if (jump !== null)
    status = [
      seg('jump to step: ', { bold: true }),
      seg(`${jump}▌`),
      seg('  (enter go, esc cancel)', { tint: 'muted' }),
    ];
  else if (recording.warnings.length > 0) status = [seg(recording.warnings[0] ?? '', { tint: 'warn' })];
  else status = [seg(`${recording.dir}`, { tint: 'muted' })];
  const detailWidth = width - tlWidth - 1;
  const detail = row ? stepDetail(recording, index, row.stepId) : undefined;
  const ledger = props.ledger?.ok ? props.ledger.value : undefined;
  return (
    <Frame title={title} status={status} keys={KEYS} width={width} height={height}>
      <Timeline
        rows={rows}
        pos={pos}
        offset={offset.current}
        height={body}
        width={tlWidth}
        costs={ledger?.stepCost}
        highlight={props.highlight}
      />
      <Box width={1} />
      {panel === 'ledger' ? (
        <LedgerPanel runs={props.scores} width={detailWidth} height={body} />
      ) : detail ? (
        <DetailPane
          detail={detail}
          total={rows.length}
          width={detailWidth}
          height={body}
          {...(ledger?.provenance.get(detail.row.stepId)
            ? { provenance: ledger.provenance.get(detail.row.stepId) }
            : {})}
          {...(world && world.step === detail.row.stepId ? { world: world.value } : {})}
          {...(ledger?.stepCost.has(detail.row.stepId)
            ? { cost: ledger.stepCost.get(detail.row.stepId), currency: ledger.currency }
            : {})}
        />
      ) : (
        <Box />
      )}
    </Frame>
  );
}
