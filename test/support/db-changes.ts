// The row changes that take one snapshot to another, as change capture records them (db.changed
// payloads keyed by primary key, or by the whole row for a table without one), for tests that hold
// a sandbox's end state to a recorded one.
import { canonicalJson, type DbChangedPayload, type DbSnapshot, type Row } from '../../src/recording/index.js';

export function changesBetween(pre: DbSnapshot, post: DbSnapshot): DbChangedPayload[] {
  const out: DbChangedPayload[] = [];
  for (const after of post.tables) {
    const before = pre.tables.find((t) => t.schema === after.schema && t.name === after.name);
    const keyOf = (row: Row): Row =>
      after.primaryKey.length === 0 ? row : Object.fromEntries(after.primaryKey.map((k) => [k, row[k] ?? null]));
    const was = new Map((before?.rows ?? []).map((r) => [canonicalJson(keyOf(r)), r]));
    const now = new Map(after.rows.map((r) => [canonicalJson(keyOf(r)), r]));
    const base = { schema: after.schema, table: after.name };
    for (const [id, row] of was) if (!now.has(id)) out.push({ ...base, op: 'delete', key: keyOf(row) });
    for (const [id, row] of now) {
      const old = was.get(id);
      if (old === undefined) out.push({ ...base, op: 'insert', key: keyOf(row), after: row });
      else if (canonicalJson(old) !== canonicalJson(row))
        out.push({ ...base, op: 'update', key: keyOf(row), after: row });
    }
  }
  return out;
}
