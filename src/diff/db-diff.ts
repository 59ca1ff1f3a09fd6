// Database diff: two db snapshots, each table hash-joined by primary key; updates name their changed columns.
import {
  type DbSnapshot,
  type DbTable,
  type Domains,
  type Row,
  rowsInOneForm,
  SERVER_CLOCK_FUNCTIONS,
} from '../recording/index.js';
import type { DbChange } from './types.js';

export interface DbDiffOptions {
  /** rowRef(schema, table, key) -> steps that touched the row (from db.changed events). */
  attribution?: ReadonlyMap<string, number[]>;
}

/** Stable identity of a row: the table and its key values, key columns in name order. */
export function rowRef(schema: string, table: string, key: Row): string {
  return `${schema}.${table}\u0000${keyString(key, Object.keys(key).sort())}`;
}

function keyString(row: Row, columns: readonly string[]): string {
  if (columns.length === 1) {
    const v = row[columns[0]!];
    // The common case (one scalar key column) without JSON: type-tagged so 1 and "1" stay apart.
    if (typeof v === 'number') return `n${v}`;
    if (typeof v === 'string') return `s${v}`;
  }
  const values: unknown[] = [];
  for (const c of columns) values.push(row[c]);
  return `j${JSON.stringify(values)}`;
}

/**
 * Row changes from `before` to `after`, table by table, ordered by table then key.
 * A table without a primary key is keyed by all its columns (an update shows as delete + insert).
 */
export function diffDb(
  before: DbSnapshot | undefined,
  after: DbSnapshot | undefined,
  options: DbDiffOptions = {},
): DbChange[] {
  const tables = new Map<string, { a?: DbTable; b?: DbTable }>();
  for (const t of before?.tables ?? []) tables.set(`${t.schema}.${t.name}`, { a: t });
  for (const t of after?.tables ?? []) {
    const slot = tables.get(`${t.schema}.${t.name}`);
    if (slot) slot.b = t;
    else tables.set(`${t.schema}.${t.name}`, { b: t });
  }
  const changes: DbChange[] = [];
  for (const name of [...tables.keys()].sort()) {
    const { a, b } = tables.get(name)!;
    diffTable(a, b, options, changes, after?.domains ?? before?.domains);
  }
  return changes;
}

function keyColumns(t: DbTable): string[] {
  const cols = t.primaryKey.length > 0 ? t.primaryKey : t.columns.map((c) => c.name);
  return [...cols].sort();
}

function diffTable(
  a: DbTable | undefined,
  b: DbTable | undefined,
  options: DbDiffOptions,
  out: DbChange[],
  domains: Domains | undefined,
): void {
  const table = (a ?? b)!;
  const keyCols = keyColumns(b ?? table);
  const prefix = `${table.schema}.${table.name}\u0000`;
  // A recording made before held json/jsonb parsed, a replay's end state holds their text: one form.
  const [rowsA, rowsB] = rowsInOneForm(a, b, domains);
  const beforeRows = new Map<string, Row>();
  for (const row of rowsA) beforeRows.set(keyString(row, keyCols), row);
  const clock = serverClockColumns(a, b);
  const push = (
    op: DbChange['op'],
    k: string,
    key: Row,
    was: Row | undefined,
    now: Row | undefined,
    changed: string[],
  ) => {
    const steps = options.attribution?.get(prefix + k) ?? [];
    const change: DbChange = {
      kind: 'row',
      schema: table.schema,
      table: table.name,
      op,
      key,
      changedColumns: changed,
      stepId: steps.at(-1) ?? null,
      steps,
    };
    if (was) change.before = was;
    if (now) change.after = now;
    if (op === 'update' && changed.every((c) => clock.has(c))) change.serverClock = true;
    out.push(change);
  };
  const start = out.length;
  for (const row of rowsB) {
    const k = keyString(row, keyCols);
    const was = beforeRows.get(k);
    if (was === undefined) {
      push('insert', k, pick(row, keyCols), undefined, row, Object.keys(row));
      continue;
    }
    beforeRows.delete(k);
    const changed = changedColumns(was, row);
    if (changed.length > 0) push('update', k, pick(row, keyCols), was, row, changed);
  }
  for (const [k, row] of beforeRows) push('delete', k, pick(row, keyCols), row, undefined, Object.keys(row));
  const mine = out.splice(start);
  mine.sort((x, y) => compareKeys(x.key, y.key, keyCols));
  for (const c of mine) out.push(c);
}

const CLOCK = new Set<string>(SERVER_CLOCK_FUNCTIONS);

/** Columns that either side describes with a default the server fills from its clock. */
function serverClockColumns(...tables: Array<DbTable | undefined>): Set<string> {
  const out = new Set<string>();
  for (const t of tables)
    for (const c of t?.columns ?? []) if (c.default?.kind === 'function' && CLOCK.has(c.default.name)) out.add(c.name);
  return out;
}

function pick(row: Row, columns: readonly string[]): Row {
  const key: Row = {};
  for (const c of columns) key[c] = row[c];
  return key;
}

function compareKeys(x: Row, y: Row, columns: readonly string[]): number {
  for (const c of columns) {
    const a = x[c];
    const b = y[c];
    if (a === b) continue;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    const sa = String(a);
    const sb = String(b);
    if (sa !== sb) return sa < sb ? -1 : 1;
  }
  return 0;
}

/** Columns whose values differ between two versions of a row. */
export function changedColumns(a: Row, b: Row): string[] {
  const changed: string[] = [];
  for (const c in b) if (!sameValue(a[c], b[c])) changed.push(c);
  for (const c in a) if (!(c in b)) changed.push(c);
  return changed;
}

/** Equality of JSON values (objects compared structurally, key order ignored). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) if (!(k in bo) || !sameValue(ao[k], bo[k])) return false;
  return true;
}
