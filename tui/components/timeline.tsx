// The timeline of steps, virtualised: only the rows in the visible window are rendered, so
// moving through a 10,000-step run costs the same as through a 10-step one.
import { Box, Text } from 'ink';
import { terminalSafe } from '../../src/recording/terminal-safe.js';
import { clip, clipRight, fmtCost, fmtMs, fmtTokens } from '../data/format.js';
import type { StepRow } from '../data/steps.js';
import { type Tint, useTheme } from '../theme.js';

/** Columns that clip: latency only from 56 cells on. */
function layout(width: number) {
  const withLatency = width >= 56;
  const fixed = 1 + 5 + 1 + 10 + 1 + 6 + 1 + 7 + 1 + (withLatency ? 7 : 0) + 1;
  return { withLatency, name: Math.max(4, width - fixed) };
}

/** A step's failure mark: ✗ failed, ≠ diverged in replay, blank otherwise. */
export function markOf(row: StepRow): string {
  if (row.status === 'error' || row.status === 'timeout' || row.status === 'cancelled') return '✗';
  if (row.divergences > 0) return '≠';
  return ' ';
}

export function timelineHeader(width: number): string {
  const l = layout(width);
  return clip(
    ` ${clipRight('step', 5)} ${clip('state', 10)} ${clip('tool / model', l.name)} ${clipRight('tok', 6)} ${clipRight('cost', 7)}${l.withLatency ? ` ${clipRight('time', 6)}` : ''} `,
    width,
  );
}

export function timelineRow(row: StepRow, width: number, cost?: number, selected = false): string {
  const l = layout(width);
  const text = `${selected ? '▸' : ' '}${clipRight(String(row.stepId), 5)} ${clip(row.stateType, 10)} ${clip(row.name, l.name)} ${clipRight(fmtTokens(row.tokens), 6)} ${clipRight(cost === undefined ? '—' : fmtCost(cost), 7)}${l.withLatency ? ` ${clipRight(fmtMs(row.latencyMs), 6)}` : ''}${markOf(row)}`;
  return clip(text, width);
}

/** Keeps `pos` inside the window [offset, offset + height). */
export function scrollOffset(pos: number, offset: number, height: number, total: number): number {
  if (height <= 0) return 0;
  let next = offset;
  if (pos < next) next = pos;
  if (pos >= next + height) next = pos - height + 1;
  return Math.max(0, Math.min(next, Math.max(0, total - height)));
}

export interface TimelineProps {
  rows: StepRow[];
  pos: number;
  offset: number;
  height: number;
  width: number;
  costs?: Map<number, number>;
  /** Step ids to highlight (e.g. a bisect result). */
  highlight?: number;
}

export function Timeline({ rows, pos, offset, height, width, costs, highlight }: TimelineProps) {
  const theme = useTheme();
  const visible = rows.slice(offset, offset + Math.max(0, height - 1));
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text wrap="truncate" bold color={theme.tint('muted')}>
        {timelineHeader(width)}
      </Text>
      {visible.map((row, i) => {
        const selected = offset + i === pos;
        const mark = markOf(row);
        const tint: Tint | undefined =
          mark === '✗'
            ? 'bad'
            : mark === '≠' || row.stepId === highlight
              ? 'diverge'
              : row.kind === 'model'
                ? undefined
                : 'muted';
        return (
          <Text
            key={row.stepId}
            wrap="truncate"
            inverse={selected}
            color={selected || !tint ? undefined : theme.tint(tint)}
          >
            {terminalSafe(timelineRow(row, width, costs?.get(row.stepId), selected))}
          </Text>
        );
      })}
    </Box>
  );
}
