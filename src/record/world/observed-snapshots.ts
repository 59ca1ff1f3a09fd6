// The pre and post snapshots of an observed run (`world: 'observed'`), assembled from the facts
// the request thread gathered (observed-world.ts): the catalog's description of the schemas, the
// first image of every row the run touched, its committed changes and the sequence values its
// inserts drew. Pure data in, data out: it runs where the recording is written (the recording
// thread, for a server's runs), so the request thread neither builds nor copies two snapshots a run.
import {
  canonicalJson,
  type DbChangedPayload,
  type DbSequence,
  type DbSnapshot,
  type DbTable,
  type Row,
  sortRows,
} from '../../recording/index.js';

/** The catalog's description of a set of schemas (shared by every run that touched them). */
export interface SchemaDescription {
  tables: Array<DbTable & { oid: number }>;
  sequences: DbSequence[];
  /** The schemas' DDL without rows or sequence positions. */
  ddl: string[];
  /** Their enum types, domains, the database's extensions and what a sandbox does not rebuild. */
  objects?: Pick<DbSnapshot, 'enums' | 'composites' | 'domains' | 'extensions' | 'unbuilt' | 'searchPath'>;
}

/** What a run observed of its database, as the request thread hands it over. */
export interface ObservedWorldFacts {
  description: SchemaDescription;
  /** The schemas the run touched, sorted. */
  schemas: string[];
  /** Per table the run touched (oid): the first image of each row that existed, by its id (the canonical JSON of its key). */
  images: Array<[oid: number, rows: Array<[id: string, row: Row]>]>;
  /** Its committed changes, in order. */
  changes: DbChangedPayload[];
  /** Per sequence (`schema\0name`): the least and greatest values its inserts drew. */
  drawn: Array<[sequence: string, range: { min: number; max: number; increment: number }]>;
}

/** The run's pre-world (the first images) and post-world (those with its changes applied). */
export function observedSnapshots(facts: ObservedWorldFacts): { pre: DbSnapshot; post: DbSnapshot } {
  const { description, schemas } = facts;
  const pre = new Map(facts.images.map(([oid, rows]) => [oid, new Map(rows)]));
  const post = new Map([...pre].map(([oid, rows]) => [oid, new Map(rows)]));
  const oids = new Map(description.tables.map((t) => [`${t.schema}\u0000${t.name}`, t.oid]));
  // Rows another row's new key displaced: one UPDATE swapping keys (a deferrable key) moves the
  // first row onto the second's key before the second moves; the second is found here by its image.
  const displaced = new Map<string, Row>();
  for (const change of facts.changes) {
    const oid = oids.get(`${change.schema}\u0000${change.table}`);
    const rows = oid === undefined ? undefined : post.get(oid);
    if (rows === undefined) continue;
    const id = canonicalJson(change.key);
    const slot = `${oid}\u0000${id}`;
    const mine = change.before !== undefined && displaced.has(slot) && sameRow(displaced.get(slot), change.before);
    if (mine) displaced.delete(slot);
    else if (change.op !== 'insert') rows.delete(id);
    if (change.op === 'delete' || change.after === undefined) continue;
    // An update may change the row's key: it is then known by its new one.
    const after = change.after;
    const to = canonicalJson(Object.fromEntries(Object.keys(change.key).map((c) => [c, after[c] ?? null])));
    const held = rows.get(to);
    if (held !== undefined && to !== id) displaced.set(`${oid}\u0000${to}`, held);
    rows.set(to, after);
  }
  const drawn = new Map(facts.drawn);
  const snapshot = (rowsOf: Map<number, Map<string, Row>>, position: 'pre' | 'post'): DbSnapshot => {
    const tables: DbTable[] = description.tables.map(({ oid, ...t }) => ({
      ...t,
      rows: sortRows([...(rowsOf.get(oid)?.values() ?? [])], t.primaryKey),
    }));
    const sequences = description.sequences.map((s): DbSequence => {
      const d = drawn.get(`${s.schema}\u0000${s.name}`);
      if (d === undefined) return s;
      // Where the run found the sequence, and where it left it, as far as its own inserts show.
      const last = position === 'pre' ? d.min - d.increment : d.max;
      if (last < Number(s.min)) return { ...s, last: s.min, called: false };
      return { ...s, last: String(last), called: true };
    });
    // The DDL leaves out rows and sequence positions: the description's own serves every run.
    return { schemas, tables, sequences, ...description.objects, ddl: [...description.ddl] };
  };
  return { pre: snapshot(pre, 'pre'), post: snapshot(post, 'post') };
}

const sameRow = (a: Row | undefined, b: Row): boolean => a !== undefined && canonicalJson(a) === canonicalJson(b);
