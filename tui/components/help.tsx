// The `?` help: every key of every screen.
import { Box } from 'ink';
import { type Line, Lines, plain, seg } from './lines.js';

const HELP: Array<[string, Array<[string, string]>]> = [
  [
    'Recordings',
    [
      ['type', 'filter the list'],
      ['↑ ↓', 'select'],
      ['enter', 'open the run'],
      ['esc', 'clear the filter'],
    ],
  ],
  [
    'Run (time travel)',
    [
      ['j k ↓ ↑', 'step (the world follows)'],
      ['PgDn PgUp', 'a page of steps'],
      ['home end G', 'first / last step'],
      ['g 42 enter', 'jump to step 42'],
      ['n N', 'next / prev marked step'],
      ['l', 'ledger and scores'],
      ['r', 'replay, changed prompt'],
      ['b', 'bisect belief vs world'],
      ['esc', 'back to recordings'],
    ],
  ],
  [
    'Replay',
    [
      ['e', 'edit prompt in $EDITOR'],
      ['f', 'prompt from a file'],
      ['j k', 'scroll the diff'],
      ['enter', 'go to first divergence'],
      ['n', 'a new replay'],
    ],
  ],
  [
    'Everywhere',
    [
      ['?', 'help (any key closes)'],
      ['q', 'quit (ctrl+c too)'],
    ],
  ],
];

function sectionLines(sections: typeof HELP): Line[] {
  const lines: Line[] = [];
  for (const [title, keys] of sections) {
    lines.push([seg(title, { bold: true, tint: 'accent' })]);
    for (const [key, label] of keys) lines.push([seg(`  ${key.padEnd(11)}`, { bold: true }), seg(label)]);
  }
  return lines;
}

const MARKS: Line[] = [
  [seg('Marks', { bold: true, tint: 'accent' })],
  plain('  ✗ failed step'),
  plain('  ≠ divergent step'),
  plain('  » first divergence'),
  plain('  ~ estimated provenance'),
];

/** Two columns: the help fits an 80x24 terminal. */
export function helpColumns(): [Line[], Line[]] {
  return [sectionLines(HELP.slice(0, 2)), [...sectionLines(HELP.slice(2)), plain(''), ...MARKS]];
}

export function Help({ width, height }: { width: number; height: number }) {
  const [left, right] = helpColumns();
  const half = Math.floor(width / 2);
  return (
    <Box flexDirection="row" width={width} height={height}>
      <Lines lines={left} width={half} height={height} />
      <Lines lines={right} width={width - half} height={height} />
    </Box>
  );
}
