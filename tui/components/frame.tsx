// Every screen's frame: a title line, the body, a status line, and the footer of keys.
import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import { clip } from '../data/format.js';
import { useTheme } from '../theme.js';
import { type Line, Lines } from './lines.js';

export type KeyHelp = Array<[key: string, label: string]>;

/** The footer text: "j/k step  g jump  ? help  q quit", cut to the width. */
export function footerText(keys: KeyHelp, width: number): string {
  return clip(keys.map(([k, label]) => `${k} ${label}`).join('  '), width);
}

export interface FrameProps {
  title: Line;
  status?: Line;
  keys: KeyHelp;
  width: number;
  height: number;
  children: ReactNode;
}

/** Body height of a frame of `height` lines. */
export const bodyHeight = (height: number) => Math.max(1, height - 3);

export function Frame({ title, status, keys, width, height, children }: FrameProps) {
  const theme = useTheme();
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Lines lines={[title]} width={width} />
      <Box height={bodyHeight(height)} width={width} overflow="hidden">
        {children}
      </Box>
      <Lines lines={[status ?? []]} width={width} />
      <Text wrap="truncate" inverse={theme.color} dimColor={!theme.color}>
        {footerText(keys, width)}
      </Text>
    </Box>
  );
}
