// Bisect from the UI: the search range narrowing probe by probe over the steps, then the first
// step where the agent's belief diverged from the world.

import { bodyHeight, Frame, type KeyHelp } from '../components/frame.js';
import { type Line, Lines, plain, seg } from '../components/lines.js';
import type { BisectProbe } from '../data/engines.js';
import { wrapLines } from '../data/format.js';
import type { StepIndex } from '../data/steps.js';
import type { BisectSession } from '../hooks/use-bisect.js';
import { useKeys } from '../hooks/use-keys.js';

/** The candidate range after each probe: good moves the low end up, bad moves the high end down. */
export function narrow(
  probes: BisectProbe[],
  first: number,
  last: number,
): Array<{ probe: BisectProbe; lo: number; hi: number }> {
  let lo = first;
  let hi = last;
  return probes.map((probe) => {
    if (probe.lo !== undefined || probe.hi !== undefined) {
      // The engine's own range: (good, bad].
      if (probe.lo !== undefined) lo = probe.lo + 1;
      if (probe.hi !== undefined) hi = probe.hi;
    } else if (/good|pass|true|ok/i.test(probe.verdict)) lo = probe.step + 1;
    else if (/bad|fail|false/i.test(probe.verdict)) hi = probe.step;
    return { probe, lo, hi };
  });
}

/** A bar over all steps: ═ still in range, · ruled out, ▲ the probe. */
export function rangeBar(
  lo: number,
  hi: number,
  probe: number | undefined,
  first: number,
  last: number,
  width: number,
): string {
  const span = Math.max(1, last - first + 1);
  let out = '';
  for (let i = 0; i < width; i++) {
    const a = first + Math.floor((i * span) / width);
    const b = first + Math.floor(((i + 1) * span) / width) - 1;
    if (probe !== undefined && probe >= a && probe <= Math.max(a, b)) out += '▲';
    else if (Math.max(a, b) >= lo && a <= hi) out += '═';
    else out += '·';
  }
  return out;
}

export interface BisectScreenProps {
  index: StepIndex;
  name: string;
  session: BisectSession;
  width: number;
  height: number;
  isActive: boolean;
  onStart(): void;
  onBack(): void;
  onGoto(stepId: number): void;
  onQuit(): void;
  onHelp(): void;
}

export function BisectScreen(props: BisectScreenProps) {
  const { session, index, width, height } = props;
  const body = bodyHeight(height);
  const first = index.rows[0]?.stepId ?? 1;
  const last = index.rows.at(-1)?.stepId ?? 1;

  useKeys(
    (input, key) => {
      if (input === 'q') props.onQuit();
      else if (input === '?') props.onHelp();
      else if (key.escape) props.onBack();
      else if (input === 'b' && session.phase !== 'running') props.onStart();
      else if (key.return && session.phase === 'done' && session.view.firstBad !== undefined)
        props.onGoto(session.view.firstBad);
    },
    { isActive: props.isActive },
  );

  const probes =
    session.phase === 'running' || session.phase === 'failed'
      ? session.probes
      : session.phase === 'done'
        ? session.view.probes
        : [];
  const steps = narrow(probes, first, last);
  const barWidth = Math.max(10, width - 24);
  const lines: Line[] = [
    [seg('Bisect: the first step where the agent’s belief diverges from the world', { bold: true })],
    [
      seg(`steps ${first}..${last} · at most ${Math.ceil(Math.log2(Math.max(2, last - first + 1))) + 1} probes`, {
        tint: 'muted',
      }),
    ],
    plain(''),
  ];
  const current = steps.at(-1);
  lines.push([
    seg(`${'range'.padEnd(8)}`, { bold: true }),
    seg(rangeBar(current?.lo ?? first, current?.hi ?? last, undefined, first, last, barWidth), { tint: 'accent' }),
  ]);
  const shown = steps.slice(-Math.max(1, body - 9));
  for (const s of shown) {
    const good = /good|pass|true|ok/i.test(s.probe.verdict);
    lines.push([
      seg(`${`step ${s.probe.step}`.padEnd(10)}`),
      seg(rangeBar(s.lo, s.hi, s.probe.step, first, last, barWidth - 2)),
      seg(` ${s.probe.verdict}`, { tint: good ? 'good' : 'bad' }),
    ]);
  }
  lines.push(plain(''));
  let keys: KeyHelp = [
    ['esc', 'back'],
    ['?', 'help'],
    ['q', 'quit'],
  ];
  if (session.phase === 'idle') {
    lines.push([seg('press b to start', { tint: 'muted' })]);
    keys = [['b', 'start'], ...keys];
  } else if (session.phase === 'running') lines.push([seg(`searching… ${probes.length} probe(s)`, { tint: 'warn' })]);
  else if (session.phase === 'failed') {
    lines.push([seg(session.reason, { tint: 'bad' })]);
    keys = [['b', 'retry'], ...keys];
  } else if (session.view.firstBad !== undefined) {
    lines.push([
      seg('result: first bad step ', { bold: true, tint: 'diverge' }),
      seg(String(session.view.firstBad), { bold: true, inverse: true }),
    ]);
    for (const l of wrapLines(session.view.message, width - 2, 3)) lines.push(plain(`  ${l}`));
    keys = [['enter', `go to step ${session.view.firstBad}`], ['b', 'again'], ...keys];
  } else
    lines.push([seg(`result: ${session.view.message || 'no step where belief and world diverge'}`, { tint: 'good' })]);
  const title: Line = [seg('tapedeck ', { bold: true, tint: 'accent' }), seg(`bisect ${props.name}`)];
  return (
    <Frame title={title} keys={keys} width={width} height={height}>
      <Lines lines={lines} width={width} height={body} />
    </Frame>
  );
}
