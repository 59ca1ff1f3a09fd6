// Time travel over a recording: the world (fs + db) as it was after step k.
import { canonicalJson } from './canonical-json.js';
import type { DbSnapshot, DbTable, FsSnapshot, Recording, Row } from './types.js';

/**
 * Orders primary-key values: numbers (and integer strings, as bigint/numeric columns are stored)
 * numerically, everything else by canonical JSON. Snapshot writers sort rows with the same order
 * (see sortRows) so that worldAt(last) equals the post snapshot.
 */
export function compareKeyValues(a: unknown, b: unknown): number {
  const na = asNumber(a);
  const nb = asNumber(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (na !== undefined) return -1;
  if (nb !== undefined) return 1;
  const sa = typeof a === 'string' ? a : canonicalJson(a);
  const sb = typeof b === 'string' ? b : canonicalJson(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function asNumber(value: unknown): bigint | number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,300}$/.test(value)) return BigInt(value);
  return undefined;
}

/** Sorts a table's rows by its primary key columns (in place) and returns them. */
export function sortRows(rows: Row[], primaryKey: readonly string[]): Row[] {
  if (primaryKey.length === 0) return rows;
  return rows.sort((x, y) => {
    for (const column of primaryKey) {
      const c = compareKeyValues(x[column], y[column]);
      if (c !== 0) return c;
    }
    return 0;
  });
}

function matchesKey(row: Row, key: Row): boolean {
  for (const [column, value] of Object.entries(key)) {
    if (canonicalJson(row[column]) !== canonicalJson(value)) return false;
  }
  return true;
}

function cloneDb(db: DbSnapshot): DbSnapshot {
  // Every field kept (enums, domains, searchPath, …): a world at a step is seeded like the snapshot.
  return {
    ...db,
    schemas: [...db.schemas],
    ddl: [...db.ddl],
    tables: db.tables.map((t) => ({ ...t, columns: [...t.columns], primaryKey: [...t.primaryKey], rows: [...t.rows] })),
    ...(db.sequences ? { sequences: db.sequences.map((s) => ({ ...s })) } : {}),
  };
}

/**
 * An inserted row took its ids from the sequences of its columns' defaults: the world after it has
 * those sequences at least that far (ids drawn and rolled back leave no trace in the change log).
 */
function advanceSequences(db: DbSnapshot, table: DbTable, row: Row): void {
  if (!db.sequences) return;
  for (const column of table.columns) {
    const d = column.default;
    const owner = (s: NonNullable<DbSnapshot['sequences']>[number]) =>
      d?.kind === 'sequence'
        ? s.schema === d.schema && s.name === d.name
        : column.identity !== undefined &&
          s.identity === true &&
          s.schema === table.schema &&
          s.ownedBy?.table === table.name &&
          s.ownedBy.column === column.name;
    const seq = db.sequences.find(owner);
    const value = row[column.name];
    if (
      !seq ||
      !(
        (typeof value === 'number' && Number.isSafeInteger(value)) ||
        (typeof value === 'string' && /^-?\d{1,19}$/.test(value))
      )
    )
      continue;
    const v = BigInt(value);
    const last = BigInt(seq.last);
    const up = BigInt(seq.increment) >= 0n;
    // Not yet called, the next value is `last` itself; called, it is past it.
    const drawn = seq.called ? (up ? v > last : v < last) : up ? v >= last : v <= last;
    if (drawn) {
      seq.last = v.toString();
      seq.called = true;
    }
  }
}

/**
 * The world after step `step`: the pre snapshot plus the fs.changed and db.changed events of
 * steps 0..step, in seq order. worldAt(recording, lastStep) equals the post snapshot.
 * A step below 0 gives the pre snapshot.
 */
export function worldAt(
  recording: Pick<Recording, 'events' | 'pre'>,
  step: number,
): { fs: FsSnapshot; db?: DbSnapshot } {
  const files: FsSnapshot['files'] = { ...(recording.pre.fs?.files ?? {}) };
  let db = recording.pre.db ? cloneDb(recording.pre.db) : undefined;
  const touched = new Set<DbTable>();
  for (const event of recording.events) {
    if (event.stepId > step) continue;
    if (event.type === 'fs.changed') {
      const { path, op, after } = event.payload;
      if (op === 'delete' || !after) delete files[path];
      else files[path] = after;
    } else if (event.type === 'db.changed') {
      const change = event.payload;
      db ??= { schemas: [], ddl: [], tables: [] };
      let table = db.tables.find((t) => t.schema === change.schema && t.name === change.table);
      if (!table) {
        table = {
          schema: change.schema,
          name: change.table,
          columns: [],
          primaryKey: Object.keys(change.key),
          rows: [],
        };
        db.tables.push(table);
        if (!db.schemas.includes(change.schema)) db.schemas.push(change.schema);
      }
      // By its key, and its image before where two rows hold the key a moment (one UPDATE swapping
      // keys moved the first row onto the second's key before the second moved).
      const before = change.before === undefined ? undefined : canonicalJson(change.before);
      const keyed = (image: boolean) =>
        table.rows.findIndex((row) => matchesKey(row, change.key) && (!image || canonicalJson(row) === before));
      const exact = change.op === 'insert' || before === undefined ? -1 : keyed(true);
      const index = change.op === 'insert' ? -1 : exact >= 0 ? exact : keyed(false);
      if (change.op === 'delete') {
        if (index >= 0) table.rows.splice(index, 1);
      } else if (change.after) {
        if (index >= 0) table.rows[index] = change.after;
        else table.rows.push(change.after);
        if (change.op === 'insert') advanceSequences(db, table, change.after);
      }
      touched.add(table);
    }
  }
  for (const table of touched) sortRows(table.rows, table.primaryKey);
  const sortedFiles: FsSnapshot['files'] = {};
  for (const path of Object.keys(files).sort()) sortedFiles[path] = files[path] as FsSnapshot['files'][string];
  return db ? { fs: { files: sortedFiles }, db } : { fs: { files: sortedFiles } };
}

/**
 * The last step of a recording its writer never closed (its recorder killed, or still running):
 * what the recording knows of the run stops there, and it has no post snapshot. undefined for a
 * closed recording, whatever its status (an agent that crashed was recorded to its end).
 */
export function cutAt(recording: Pick<Recording, 'manifest' | 'events'>): number | undefined {
  if (recording.manifest.status !== 'incomplete') return undefined;
  if (recording.events.some((e) => e.type === 'run.completed')) return undefined;
  return recording.events.reduce((max, e) => (e.stepId > max ? e.stepId : max), 0);
}

/**
 * The recorded end state, for each side the recording captured: its post snapshot, or, for a side
 * without one (a recording cut by a killed recorder, cutAt), the pre snapshot plus every recorded
 * change (worldAt its last step): all the recording knows of its end. Files and rows that were
 * there before the run, or that the run wrote before the cut, are in it.
 * @example compareWorlds(endWorld(recording), replayPost)
 */
export function endWorld(recording: Pick<Recording, 'events' | 'pre' | 'post'>): { fs?: FsSnapshot; db?: DbSnapshot } {
  const { pre, post } = recording;
  const known = (!post.fs && pre.fs) || (!post.db && pre.db) ? worldAt(recording, Number.POSITIVE_INFINITY) : undefined;
  const fs = post.fs ?? (pre.fs ? known?.fs : undefined);
  const db = post.db ?? (pre.db ? known?.db : undefined);
  return { ...(fs ? { fs } : {}), ...(db ? { db } : {}) };
}
