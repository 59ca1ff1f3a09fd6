// A recorded world laid over a development snapshot: the sandbox of a replay seeded from a named
// snapshot (`--seed-snapshot`) holds the snapshot's schema and rows, with the rows the recorded run
// observed laid over them by primary key (the run's rows win). Pure functions over the snapshot
// format; the sandbox is then seeded from the result as from any snapshot (seed.ts).
import { canonicalJson, type DbSnapshot, type DbTable, type Row, sortRows, TapedeckError } from '../recording/index.js';
import { renderDdl } from './ddl.js';

const tableKey = (t: { schema: string; name: string }) => `${t.schema}.${t.name}`;

/** The columns that name a row of `table`: its primary key, else the recorded table's, else none. */
function keyColumns(table: DbTable, recorded: DbTable | undefined): string[] {
  if (table.primaryKey.length > 0) return table.primaryKey;
  return recorded?.primaryKey ?? [];
}

/** A row's key: its key columns' values, or the whole row in a table without a key. */
const rowKey = (row: Row, columns: string[]) =>
  columns.length > 0 ? canonicalJson(columns.map((c) => row[c] ?? null)) : canonicalJson(row);

/**
 * The tables the recording needs (those with rows before or after the run) must be in the snapshot
 * with every column those rows have: otherwise one line naming the first that is not.
 */
function checkCovers(base: DbSnapshot, worlds: DbSnapshot[], label: string): void {
  const tables = new Map(base.tables.map((t) => [tableKey(t), t]));
  for (const world of worlds) {
    for (const t of world.tables) {
      if (t.rows.length === 0) continue;
      const there = tables.get(tableKey(t));
      if (there === undefined) {
        throw new TapedeckError(
          'SNAPSHOT_MISMATCH',
          `${label} has no table ${tableKey(t)}, which the recording needs (the run read or wrote ${t.rows.length} row(s) of it); save a snapshot of a database with that table (--schema ${t.schema}).`,
        );
      }
      const columns = new Set(there.columns.map((c) => c.name));
      for (const row of t.rows) {
        const missing = Object.keys(row).find((c) => !columns.has(c));
        if (missing !== undefined) {
          throw new TapedeckError(
            'SNAPSHOT_MISMATCH',
            `${label}'s table ${tableKey(t)} has no column ${JSON.stringify(missing)}, which the recording's rows have; save a snapshot of a database with the recorded schema.`,
          );
        }
      }
    }
  }
}

/** The keys of `world`'s rows per table, as `base` keys them. */
function keysOf(base: DbSnapshot, world: DbSnapshot | undefined): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const recorded = new Map((world?.tables ?? []).map((t) => [tableKey(t), t]));
  for (const t of base.tables) {
    const r = recorded.get(tableKey(t));
    if (r === undefined) continue;
    const columns = keyColumns(t, r);
    out.set(tableKey(t), new Set(r.rows.map((row) => rowKey(row, columns))));
  }
  return out;
}

/** The keys in `a` and not in `b`, per table. */
function minus(a: Map<string, Set<string>>, b: Map<string, Set<string>>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [table, keys] of a) {
    const other = b.get(table);
    out.set(table, new Set([...keys].filter((k) => !other?.has(k))));
  }
  return out;
}

/**
 * `layer`'s rows over `base`'s, by `base`'s primary key (a row of both: the layer's values, the
 * base's for columns the layer lacks); rows keyed in `drop` are left out. Tables of `layer` that
 * `base` lacks (and that hold no rows: checkCovers saw to that) are added empty, with their
 * sequences; a sequence of both takes the layer's position (exact replay hands out the recorded ids).
 */
function overlay(base: DbSnapshot, layer: DbSnapshot, drop: Map<string, Set<string>>): DbSnapshot {
  const layered = new Map(layer.tables.map((t) => [tableKey(t), t]));
  const tables: DbTable[] = base.tables.map((t) => {
    const l = layered.get(tableKey(t));
    const dropped = drop.get(tableKey(t));
    if (l === undefined && (dropped === undefined || dropped.size === 0)) return t;
    const columns = keyColumns(t, l);
    if (columns.length === 0) {
      // Without a key a row is its values: the base's rows stay (repeats too), the layer's new ones are added.
      const have = new Set(t.rows.map((row) => rowKey(row, columns)));
      const kept = t.rows.filter((row) => !dropped?.has(rowKey(row, columns)));
      return { ...t, rows: [...kept, ...(l?.rows ?? []).filter((row) => !have.has(rowKey(row, columns)))] };
    }
    const rows = new Map(t.rows.map((row) => [rowKey(row, columns), row]));
    for (const key of dropped ?? []) rows.delete(key);
    for (const row of l?.rows ?? []) {
      const key = rowKey(row, columns);
      rows.set(key, { ...(rows.get(key) ?? {}), ...row });
    }
    return { ...t, rows: sortRows([...rows.values()], t.primaryKey) };
  });
  const inBase = new Set(tables.map(tableKey));
  const added = layer.tables.filter((t) => !inBase.has(tableKey(t)));
  tables.push(...added.map((t) => ({ ...t, rows: [] })));
  const schemas = [...new Set([...base.schemas, ...added.map((t) => t.schema)])];
  const layerSequences = new Map((layer.sequences ?? []).map((s) => [tableKey(s), s]));
  const sequences = (base.sequences ?? []).map((s) => layerSequences.get(tableKey(s)) ?? s);
  const baseSequences = new Set(sequences.map(tableKey));
  for (const s of layer.sequences ?? []) {
    if (!baseSequences.has(tableKey(s)) && schemas.includes(s.schema)) sequences.push(s);
  }
  const body = { schemas, tables, sequences };
  return { ...body, ddl: renderDdl(body) };
}

/** A sandbox's seed laid from a snapshot and a recording, and the end state an exact replay must reach in it. */
export interface LaidWorld {
  /** The snapshot's schema and rows with the run's pre-world rows over them. */
  seed: DbSnapshot;
  /** The same with the run's post-world rows over them (its deletions applied): what an exact replay ends with. */
  post?: DbSnapshot;
}

/**
 * Lays a recording's database worlds over a development snapshot (`label` names it in errors).
 * Rows the run inserted are taken out of the seed (a snapshot row with the same key would make the
 * replayed insert collide), rows it observed replace the snapshot's, and the expected end state is
 * the seed with the run's post-world laid over it, minus the rows it deleted.
 * @example const { seed, post } = layWorldOver(dev, { pre: recording.pre.db, post: recording.post.db }, 'snapshot "dev"')
 */
export function layWorldOver(
  base: DbSnapshot,
  recorded: { pre: DbSnapshot; post?: DbSnapshot },
  label: string,
): LaidWorld {
  const { pre, post } = recorded;
  checkCovers(base, post ? [pre, post] : [pre], label);
  const before = keysOf(base, pre);
  const after = keysOf(base, post);
  const seed = overlay(base, pre, post ? minus(after, before) : new Map());
  return { seed, ...(post ? { post: overlay(seed, post, minus(before, after)) } : {}) };
}
