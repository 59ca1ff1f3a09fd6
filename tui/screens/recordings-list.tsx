// The recordings under a folder: name, agent, date, steps, status, hard gate, cost. Typing
// filters; the slower columns (steps, cost, gate) fill in as each recording is read.
import { Box } from 'ink';
import { useEffect, useMemo, useRef, useState } from 'react';
import { bodyHeight, Frame, type KeyHelp } from '../components/frame.js';
import { type Line, Lines, seg } from '../components/lines.js';
import { scrollOffset } from '../components/timeline.js';
import type { RecordingSummary, TuiServices } from '../data/engines.js';
import { clip, clipRight, fmtCost, fmtDate } from '../data/format.js';
import { useKeys } from '../hooks/use-keys.js';

export interface RowFacts {
  steps?: number;
  cost?: string;
  gate?: string;
}

export function agentOf(summary: RecordingSummary): string {
  const a = summary.manifest.agent;
  const entry = a.entry ?? a.command.findLast((part) => /\.(m?[jt]s|py)$/.test(part)) ?? a.command.join(' ');
  return entry.split('/').pop() ?? entry;
}

export function matchesFilter(summary: RecordingSummary, filter: string): boolean {
  if (!filter) return true;
  const f = filter.toLowerCase();
  const m = summary.manifest;
  return [m.name, m.id, agentOf(summary), m.status, m.replayOf ? 'replay' : ''].some((s) =>
    s.toLowerCase().includes(f),
  );
}

function columns(width: number) {
  const agent = width >= 110 ? 20 : 12;
  const fixed = 1 + agent + 1 + 16 + 1 + 6 + 1 + 10 + 1 + 5 + 1 + 8;
  return { agent, name: Math.max(8, width - fixed - 1) };
}

export function listHeader(width: number): string {
  const c = columns(width);
  return clip(
    ` ${clip('name', c.name)} ${clip('agent', c.agent)} ${clip('date (UTC)', 16)} ${clipRight('steps', 6)} ${clip('status', 10)} ${clip('gate', 5)} ${clipRight('cost', 8)}`,
    width,
  );
}

export function listRow(
  summary: RecordingSummary,
  facts: RowFacts | undefined,
  width: number,
  selected: boolean,
): string {
  const c = columns(width);
  const m = summary.manifest;
  const name = m.replayOf ? `↳ ${m.name}` : m.name;
  return clip(
    `${selected ? '▸' : ' '}${clip(name, c.name)} ${clip(agentOf(summary), c.agent)} ${clip(fmtDate(m.createdAt), 16)} ${clipRight(facts?.steps === undefined ? '…' : String(facts.steps), 6)} ${clip(m.status, 10)} ${clip(facts?.gate ?? '…', 5)} ${clipRight(facts?.cost ?? '…', 8)}`,
    width,
  );
}

const KEYS: KeyHelp = [
  ['type', 'filter'],
  ['↑↓', 'select'],
  ['enter', 'open'],
  ['esc', 'clear'],
  ['?', 'help'],
  ['q', 'quit (empty filter)'],
];

export interface RecordingsListProps {
  root: string;
  services: TuiServices;
  width: number;
  height: number;
  isActive: boolean;
  onOpen(dir: string): void;
  onQuit(): void;
  onHelp(): void;
  message?: string;
}

export function RecordingsList(props: RecordingsListProps) {
  const { services, root, width, height } = props;
  const [entries, setEntries] = useState<RecordingSummary[] | { error: string } | undefined>();
  const [facts, setFacts] = useState<Map<string, RowFacts>>(new Map());
  const [filter, setFilterState] = useState('');
  const filterRef = useRef('');
  const setFilter = (update: (f: string) => string) => {
    filterRef.current = update(filterRef.current);
    setFilterState(filterRef.current);
  };
  const [pos, setPosState] = useState(0);
  // Several keys can arrive in one chunk (↓ then enter): each must see the one before.
  const posRef = useRef(0);
  const setPos = (value: number) => {
    posRef.current = value;
    setPosState(value);
  };
  const offset = useRef(0);

  useEffect(() => {
    let live = true;
    services.listRecordings(root).then(
      (list) => {
        if (!live) return;
        const sorted = [...list].sort(
          (a, b) => b.manifest.createdAt.localeCompare(a.manifest.createdAt) || a.dir.localeCompare(b.dir),
        );
        setEntries(sorted);
        // Fill the slow columns one recording at a time.
        (async () => {
          for (const entry of sorted) {
            const f: RowFacts = {};
            try {
              const recording = await services.readRecording(entry.dir);
              f.steps = new Set(recording.events.filter((e) => e.stepId > 0).map((e) => e.stepId)).size;
              const [ledger, score] = await Promise.all([services.ledger(recording), services.score(recording)]);
              f.cost = ledger.ok ? fmtCost(ledger.value.totalCost, ledger.value.currency) : '—';
              f.gate = score.ok ? (score.value.hardSuccess ? 'PASS' : 'FAIL') : '—';
            } catch {
              f.cost = '—';
              f.gate = 'bad';
            }
            if (!live) return;
            setFacts((prev) => new Map(prev).set(entry.dir, f));
          }
        })();
      },
      (error: Error) => live && setEntries({ error: error.message }),
    );
    return () => {
      live = false;
    };
  }, [services, root]);

  const shown = useMemo(
    () => (Array.isArray(entries) ? entries.filter((e) => matchesFilter(e, filter)) : []),
    [entries, filter],
  );
  const body = bodyHeight(height);
  const selected = Math.min(pos, Math.max(0, shown.length - 1));

  useKeys(
    (input, key) => {
      const selected = Math.min(posRef.current, Math.max(0, shown.length - 1));
      if (key.upArrow) setPos(Math.max(0, selected - 1));
      else if (key.downArrow) setPos(Math.min(shown.length - 1, selected + 1));
      else if (key.pageDown) setPos(Math.min(shown.length - 1, selected + body - 2));
      else if (key.pageUp) setPos(Math.max(0, selected - body + 2));
      else if (key.return) {
        const entry = shown[selected];
        if (entry) props.onOpen(entry.dir);
      } else if (key.escape) setFilter(() => '');
      else if (key.backspace || key.delete) setFilter((f) => f.slice(0, -1));
      else if (input === 'q' && filterRef.current === '') props.onQuit();
      else if (input === '?' && filterRef.current === '') props.onHelp();
      else if (input && !key.ctrl && !key.meta && input >= ' ') {
        setFilter((f) => f + input);
        setPos(0);
      }
    },
    { isActive: props.isActive },
  );

  const top = scrollOffset(selected, offset.current, body - 1, shown.length);
  offset.current = top;
  const lines: Line[] = [[seg(listHeader(width), { bold: true, tint: 'muted' })]];
  if (entries === undefined) lines.push([seg(' reading recordings…', { tint: 'muted' })]);
  else if (!Array.isArray(entries)) lines.push([seg(` ${entries.error}`, { tint: 'bad' })]);
  else if (shown.length === 0)
    lines.push([
      seg(
        entries.length === 0
          ? ` no recordings under ${root} (tapedeck record -- <agent>)`
          : ` nothing matches "${filter}"`,
        { tint: 'muted' },
      ),
    ]);
  for (const [i, entry] of shown.slice(top, top + body - 1).entries()) {
    const isSelected = top + i === selected;
    lines.push([
      seg(listRow(entry, facts.get(entry.dir), width, isSelected), {
        inverse: isSelected,
        tint: entry.manifest.status === 'complete' ? undefined : 'warn',
      }),
    ]);
  }
  const count = Array.isArray(entries) ? `${shown.length}/${entries.length}` : '';
  const title: Line = [
    seg('tapedeck ', { bold: true, tint: 'accent' }),
    seg(`recordings in ${root} `),
    seg(count, { tint: 'muted' }),
  ];
  const status: Line = props.message
    ? [seg(props.message, { tint: 'bad' })]
    : [seg('filter: ', { bold: true }), seg(`${filter}▌`)];
  return (
    <Frame title={title} status={status} keys={KEYS} width={width} height={height}>
      <Box width={width}>
        <Lines lines={lines} width={width} height={body} />
      </Box>
    </Frame>
  );
}
