// Pre-computed lines of styled segments, drawn one <Text> per line and cut at the pane's width;
// a recording's strings in them are written out, never obeyed by the terminal (terminalSafe).
// Panels compute their lines as pure functions (testable, deterministic), this draws them.
import { Box, Text } from 'ink';
import { terminalSafe } from '../../src/recording/terminal-safe.js';
import { type Tint, useTheme } from '../theme.js';

export interface Segment {
  text: string;
  tint?: Tint;
  /** A raw ink colour (e.g. a provenance source's colour); dropped when colour is off. */
  color?: string;
  bold?: boolean;
  inverse?: boolean;
}

export type Line = Segment[];

export const seg = (text: string, style: Omit<Segment, 'text'> = {}): Segment => ({ text, ...style });
export const plain = (text: string): Line => [{ text }];
export const lineText = (line: Line): string => line.map((s) => s.text).join('');

export function Lines({ lines, width, height }: { lines: Line[]; width: number; height?: number }) {
  const theme = useTheme();
  const shown = height === undefined ? lines : lines.slice(0, height);
  return (
    <Box flexDirection="column" width={width} height={height}>
      {shown.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: lines are positional
        <Text key={i} wrap="truncate">
          {line.map((s, j) => (
            <Text
              // biome-ignore lint/suspicious/noArrayIndexKey: segments are positional
              key={j}
              color={s.color ? theme.raw(s.color) : s.tint ? theme.tint(s.tint) : undefined}
              bold={s.bold ?? false}
              inverse={s.inverse ?? false}
            >
              {terminalSafe(s.text)}
            </Text>
          ))}
        </Text>
      ))}
    </Box>
  );
}
