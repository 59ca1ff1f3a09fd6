// The selected step in full: its input (with the context-provenance bar), its output or tool
// call, what it observed, and the world at that step (what changed, and the world's size).
import type { DbChangedPayload, FsChangedPayload } from '../../src/recording/index.js';
import type { Available, WorldSummary } from '../data/engines.js';
import { compactJson, fmtCost, fmtMs, fmtTokens, wrapLines } from '../data/format.js';
import { approximateProvenance, barCells, PROVENANCE_SOURCES, type Provenance } from '../data/provenance.js';
import { messageTexts, type StepDetail } from '../data/steps.js';
import { type Line, Lines, plain, seg } from './lines.js';

export interface DetailInput {
  detail: StepDetail;
  total: number;
  provenance?: Provenance;
  /** undefined while the world is being computed. */
  world?: Available<WorldSummary>;
  cost?: number;
  currency?: string;
}

interface Section {
  title: Line;
  body: Line[];
}

/** The provenance bar (one letter per source so it reads without colour) and its legend. */
export function provenanceLines(p: Provenance, width: number): Line[] {
  const barWidth = Math.max(8, Math.min(width - 12, 60));
  const cells = barCells(p, barWidth);
  const bar: Line = [seg('context [')];
  for (const c of cells) {
    const source = PROVENANCE_SOURCES.find((s) => s.key === c.key);
    if (source) bar.push(seg(source.letter.repeat(c.cells), { color: source.color }));
  }
  bar.push(seg(']'));
  if (p.approximate) bar.push(seg(' ~', { tint: 'muted' }));
  const total = Object.values(p.tokens).reduce((s, n) => s + (n ?? 0), 0);
  const legend: Line = [];
  for (const source of PROVENANCE_SOURCES) {
    const n = p.tokens[source.key] ?? 0;
    if (n <= 0) continue;
    legend.push(seg(` ${source.letter}`, { color: source.color, bold: true }));
    legend.push(seg(` ${source.label} ${Math.round((n / total) * 100)}%`));
  }
  return [bar, legend];
}

function fsLine(c: FsChangedPayload): Line {
  const sign = c.op === 'create' ? '+' : c.op === 'delete' ? '-' : '~';
  const size = c.after ? ` (${c.after.size} B)` : '';
  return [seg(` ${sign} `, { tint: c.op === 'delete' ? 'bad' : 'good' }), seg(`${c.path}${size}`)];
}

function dbLine(c: DbChangedPayload): Line {
  const sign = c.op === 'insert' ? '+' : c.op === 'delete' ? '-' : '~';
  let change = '';
  if (c.op === 'update' && c.before && c.after) {
    const changed = Object.keys(c.after).filter((k) => compactJson(c.before?.[k]) !== compactJson(c.after?.[k]));
    change = changed.map((k) => `${k}: ${compactJson(c.before?.[k])}→${compactJson(c.after?.[k])}`).join(', ');
  } else change = compactJson(c.after ?? c.before ?? {});
  return [
    seg(` ${sign} `, { tint: c.op === 'delete' ? 'bad' : 'good' }),
    seg(`${c.schema}.${c.table} ${compactJson(c.key)} ${change}`),
  ];
}

function textBody(text: string, width: number, max: number): Line[] {
  return wrapLines(text, Math.max(1, width - 1), max).map((l) => plain(` ${l}`));
}

/** Lays the step's sections into `height` lines: every section gets its title and a share of the rest. */
export function detailLines(input: DetailInput, width: number, height: number): Line[] {
  const { detail } = input;
  const row = detail.row;
  const head: Line[] = [
    [
      seg(`Step ${row.stepId}/${input.total} `, { bold: true }),
      seg(`${row.stateType} `, { tint: 'accent', bold: true }),
      seg(`${row.name} `),
      seg(row.status, { tint: row.status === 'success' ? 'good' : row.status === 'running' ? 'warn' : 'bad' }),
      seg(
        `${row.errorType ? ` ${row.errorType}` : ''} ${fmtMs(row.latencyMs)} ${fmtTokens(row.tokens)} tok ${input.cost === undefined ? '' : fmtCost(input.cost, input.currency)}`,
      ),
    ],
  ];
  const sections: Section[] = [];
  const room = 200; // generous; trimmed to the height below
  if (detail.model) {
    const p = input.provenance ?? approximateProvenance(detail.model);
    head.push(...provenanceLines(p, width));
    const messages = messageTexts(detail.model);
    const last = messages.filter((m) => m.source !== 'system').slice(-2);
    sections.push({
      title: [seg('INPUT', { bold: true }), seg(` ${messages.length} messages, last:`, { tint: 'muted' })],
      body: last.flatMap((m) => textBody(`${m.role}: ${m.text}`, width, room)),
    });
    const out = detail.model.output;
    const outText = [out.text ?? '', ...out.toolCalls.map((c) => `→ ${c.name}(${c.arguments})`)]
      .filter(Boolean)
      .join('\n');
    sections.push({
      title: [
        seg('OUTPUT', { bold: true }),
        seg(detail.model.stopReason ? ` ${detail.model.stopReason}` : '', { tint: 'muted' }),
      ],
      body: textBody(outText || '(empty)', width, room),
    });
  }
  if (detail.tool) {
    const t = detail.tool;
    sections.push({
      title: [
        seg('TOOL CALL', { bold: true }),
        seg(` ${t.kind}${t.mutating ? ' mutating' : ''}${row.route ? ` via ${row.route}` : ''}`, { tint: 'muted' }),
      ],
      body: textBody(`${row.name}(${compactJson(t.args)})`, width, room),
    });
    sections.push({
      title: [seg('OBSERVATION', { bold: true })],
      body: textBody(detail.observation ?? '(nothing)', width, room),
    });
  }
  if (detail.divergences.length > 0) {
    sections.push({
      title: [seg(`DIVERGENCE ×${detail.divergences.length}`, { tint: 'diverge', bold: true })],
      body: detail.divergences.flatMap((d) => textBody(`${d.kind}: ${d.message}`, width, room)),
    });
  }
  const world = input.world;
  const worldHead: Line = [seg(`WORLD @ step ${row.stepId}`, { bold: true })];
  const worldBody: Line[] = [...detail.fs.map(fsLine), ...detail.db.map(dbLine)];
  if (worldBody.length === 0) worldBody.push(plain(' no files or rows changed in this step'));
  if (world === undefined) worldHead.push(seg(' …', { tint: 'muted' }));
  else if (!world.ok) worldHead.push(seg(` (${world.reason})`, { tint: 'muted' }));
  else {
    worldHead.push(seg(` ${world.value.files} files, ${world.value.tables.length} tables`, { tint: 'muted' }));
    for (const t of world.value.tables) worldBody.push([seg(`   ${t.name} ${t.rows} rows`, { tint: 'muted' })]);
  }
  sections.push({ title: worldHead, body: worldBody });

  // Share the height: titles first, then body lines round-robin so no section starves.
  let budget = height - head.length - sections.length;
  const shares = sections.map(() => 0);
  while (budget > 0) {
    let gave = false;
    for (let i = 0; i < sections.length && budget > 0; i++) {
      const s = sections[i] as Section;
      if ((shares[i] ?? 0) < s.body.length) {
        shares[i] = (shares[i] ?? 0) + 1;
        budget--;
        gave = true;
      }
    }
    if (!gave) break;
  }
  const lines = [...head];
  sections.forEach((s, i) => {
    lines.push(s.title);
    const share = shares[i] ?? 0;
    const body = s.body.slice(0, share);
    if (share < s.body.length && share > 0)
      body[share - 1] = [seg(` … ${s.body.length - share + 1} more lines`, { tint: 'muted' })];
    lines.push(...body);
  });
  return lines.slice(0, height);
}

export function DetailPane(props: DetailInput & { width: number; height: number }) {
  return <Lines lines={detailLines(props, props.width, props.height)} width={props.width} height={props.height} />;
}
