// Compares two worlds (the recorded end state and a replay's) and says, one line per object,
// where they differ. Built on diffFs and diffDb: the replay's "end state equals the recorded
// one" is the state-diff engine's verdict, not a second comparison.
import { canonicalJson, type DbSnapshot, type FsSnapshot } from '../recording/index.js';
import { diffDb } from './db-diff.js';
import { diffFs } from './fs-diff.js';

export interface World {
  fs?: FsSnapshot;
  db?: DbSnapshot;
}

export interface WorldComparison {
  /** Where the worlds differ, one line per object (empty when equal). */
  differences: string[];
  /**
   * Rows that differ only in columns the database server fills from its clock (DEFAULT now(),
   * current_timestamp, …): a replay's sandbox evaluates those again, so they are no difference of
   * the end state. Shown with both values.
   */
  serverClock: string[];
}

/**
 * Human-readable differences between `expected` and `actual` (none when equal).
 * Files are compared by content: file modes are captured with different fidelity by the
 * recorder (stat) and the replay's memfs volume (umask applied), so a mode alone is no difference.
 * Rows are compared by primary key; a table present in only one world is named as such when
 * both worlds have a database.
 * @example compareWorlds(recording.post, replayPost).differences // ['fs notes.txt: content differs']
 */
export function compareWorlds(expected: World, actual: World): WorldComparison {
  const out: string[] = [];
  const serverClock: string[] = [];
  for (const change of diffFs(expected.fs, actual.fs)) {
    if (change.op === 'create') out.push(`fs ${change.path}: not in the recorded world`);
    else if (change.op === 'delete') out.push(`fs ${change.path}: missing from the replay's world`);
    else if (change.before?.sha256 !== change.after?.sha256) out.push(`fs ${change.path}: content differs`);
  }
  // A side that captured no database has nothing to compare with.
  if (!expected.db || !actual.db) return { differences: out, serverClock };
  const tablesOf = (db: DbSnapshot) => new Set(db.tables.map((t) => `${t.schema}.${t.name}`));
  const inExpected = tablesOf(expected.db);
  const inActual = tablesOf(actual.db);
  const onlyInOne = new Set<string>();
  for (const name of [...new Set([...inExpected, ...inActual])].sort()) {
    if (inExpected.has(name) && inActual.has(name)) continue;
    onlyInOne.add(name);
    out.push(`db ${name}: table only in the ${inExpected.has(name) ? 'recorded' : "replay's"} world`);
  }
  for (const change of diffDb(expected.db, actual.db)) {
    const name = `${change.schema}.${change.table}`;
    if (onlyInOne.has(name)) continue;
    if (change.op === 'insert') out.push(`db ${name}: unexpected row ${canonicalJson(change.after)}`);
    else if (change.op === 'delete') out.push(`db ${name}: missing row ${canonicalJson(change.before)}`);
    else
      (change.serverClock ? serverClock : out).push(
        `db ${name}: row ${canonicalJson(change.key)} differs in ${change.changedColumns.join(', ')} (recorded ${canonicalJson(change.before)}, replay ${canonicalJson(change.after)})`,
      );
  }
  return { differences: out, serverClock };
}
