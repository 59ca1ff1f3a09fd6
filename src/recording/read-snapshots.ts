// A recording's snapshots (snapshots/{pre,post}/fs.json and db.json), read and validated: safe
// paths, and a database description a sandbox can be seeded from.
import { describeFromDdl } from './db-description.js';
import { fieldError, schemaError } from './field-path.js';
import { fileTreeClash } from './file-tree.js';
import { unsafePathReason } from './paths.js';
import { PARSE_ONCE, readJsonFile } from './read-files.js';
import { DbSnapshotSchema, FsSnapshotSchema } from './schema.js';
import type { DbSnapshot, DbTable, FsSnapshot } from './types.js';

/** Names that must be unique, and columns that must exist: what seeding a sandbox relies on. */
function checkDbSnapshot(db: DbSnapshot): { path: Array<string | number>; problem: string } | undefined {
  const tables = new Map<string, DbTable>();
  const schemas = new Set(db.schemas);
  for (const [i, table] of db.tables.entries()) {
    const key = JSON.stringify([table.schema, table.name]);
    if (tables.has(key))
      return { path: ['tables', i, 'name'], problem: `table ${table.schema}.${table.name} is listed twice` };
    tables.set(key, table);
    if (!schemas.has(table.schema)) {
      return { path: ['tables', i, 'schema'], problem: `schema ${JSON.stringify(table.schema)} is not in "schemas"` };
    }
    const columns = new Set<string>();
    for (const [c, column] of table.columns.entries()) {
      if (columns.has(column.name))
        return { path: ['tables', i, 'columns', c, 'name'], problem: 'the column is listed twice' };
      columns.add(column.name);
    }
    const lists: Array<[Array<string | number>, string[]]> = [[['primaryKey'], table.primaryKey]];
    for (const [u, unique] of (table.unique ?? []).entries()) lists.push([['unique', u, 'columns'], unique.columns]);
    for (const [x, index] of (table.indexes ?? []).entries()) lists.push([['indexes', x, 'columns'], index.columns]);
    for (const [f, fk] of (table.foreignKeys ?? []).entries()) lists.push([['foreignKeys', f, 'columns'], fk.columns]);
    for (const [path, names] of lists) {
      const missing = names.find((n) => !columns.has(n));
      if (missing !== undefined)
        return { path: ['tables', i, ...path], problem: `no column named ${JSON.stringify(missing)}` };
    }
    // A primary key names one row: the engines key rows by it (diff, world at step k, seeding).
    if (table.primaryKey.length > 0) {
      const seen = new Map<string, number>();
      for (const [r, row] of table.rows.entries()) {
        const key = JSON.stringify(table.primaryKey.map((c) => row[c] ?? null));
        const first = seen.get(key);
        if (first !== undefined)
          return { path: ['tables', i, 'rows', r], problem: `repeats the primary key of rows[${first}] (${key})` };
        seen.set(key, r);
      }
    }
  }
  const sequences = new Set<string>();
  for (const [i, seq] of (db.sequences ?? []).entries()) {
    const key = JSON.stringify([seq.schema, seq.name]);
    if (sequences.has(key)) return { path: ['sequences', i, 'name'], problem: 'the sequence is listed twice' };
    sequences.add(key);
    if (!schemas.has(seq.schema))
      return { path: ['sequences', i, 'schema'], problem: 'the schema is not in "schemas"' };
  }
  return undefined;
}

export interface Snapshots {
  fs?: FsSnapshot;
  db?: DbSnapshot;
}

export async function readSnapshot(dir: string, which: 'pre' | 'post', warnings: string[]): Promise<Snapshots> {
  const out: Snapshots = {};
  const fsFile = `snapshots/${which}/fs.json`;
  const fsJson = await readJsonFile(dir, fsFile);
  if (fsJson) {
    const parsed = FsSnapshotSchema.safeParse(fsJson.value, PARSE_ONCE);
    if (!parsed.success) throw schemaError(dir, fsFile, fsJson.text, parsed.error);
    for (const path of Object.keys(parsed.data.files)) {
      const reason = unsafePathReason(path);
      if (reason)
        throw fieldError(
          dir,
          fsFile,
          fsJson.text,
          ['files', path],
          `path ${JSON.stringify(path.slice(0, 200))} ${reason}`,
        );
    }
    // A path that is a file and a folder at once: no disk can hold the world.
    const clash = fileTreeClash(Object.keys(parsed.data.files));
    if (clash) throw fieldError(dir, fsFile, fsJson.text, ['files', clash.path], clash.problem);
    out.fs = parsed.data;
  }
  const dbFile = `snapshots/${which}/db.json`;
  const dbJson = await readJsonFile(dir, dbFile);
  if (dbJson) out.db = parseDbSnapshot(dir, dbFile, dbJson, warnings);
  return out;
}

/**
 * A db.json read by readJsonFile, validated: the zod schema, the description derived from its ddl
 * text when it has none (parsed, never run), and the names and columns seeding relies on. Errors
 * name `file` (in `dir`), its line and the field. A recording's snapshots and a named development
 * snapshot (src/store/snapshots.ts) are read through it alike.
 */
export function parseDbSnapshot(
  dir: string,
  file: string,
  json: { text: string; value: unknown },
  warnings: string[],
): DbSnapshot {
  const parsed = DbSnapshotSchema.safeParse(json.value, PARSE_ONCE);
  if (!parsed.success) throw schemaError(dir, file, json.text, parsed.error);
  // A recording made before db.json carried the schema description: derived from its ddl text.
  const { snapshot, ignored } = describeFromDdl(parsed.data);
  const bad = checkDbSnapshot(snapshot);
  if (bad) throw fieldError(dir, file, json.text, bad.path, bad.problem);
  if (ignored.length > 0) {
    warnings.push(
      `${file}: ${ignored.length} ddl statement(s) outside the schema description were ignored (ddl[${ignored.slice(0, 5).join('], ddl[')}]${ignored.length > 5 ? ', …' : ''}); a sandbox is built from the description, never by running recorded SQL`,
    );
  }
  return snapshot;
}
