// What observed capture knows about a database: its tables (columns, types, primary and foreign
// keys, the sequences their columns draw from, whether the user may read them), read from the
// catalog once per database in one round of bulk queries, and the SQL it composes from that —
// the expression that turns a row into the snapshot's JSON form inline (no helper function, no
// temporary table: observed capture creates nothing) and keyed reads of chosen rows.
import { jsonTextSql, normalizedKind, ownRowSql, quoteIdent, tableRef, utcTimestampSql } from '../../postgres/index.js';
import type { Row } from '../../recording/index.js';

export interface CatalogColumn {
  name: string;
  attnum: number;
  type: string;
  /** Its values are held as their text (json, jsonb, a domain over one, an array of either: jsonTextSql). */
  text: boolean;
}

export interface CatalogTable {
  oid: number;
  schema: string;
  name: string;
  /** 'r' table, 'p' partitioned table; views and others are not captured. */
  kind: string;
  /** The connected user may SELECT it (a RETURNING clause and keyed reads need that). */
  readable: boolean;
  columns: CatalogColumn[];
  /**
   * The columns its rows are known by: its primary key, else a unique index of NOT NULL columns;
   * an inheritance child without either, its nearest ancestor's (the key a read or write of the
   * parent finds the child's rows by). Empty: a table with no key, whose updates are not followed.
   */
  primaryKey: string[];
  foreignKeys: Array<{ columns: string[]; refOid: number; refColumns: string[] }>;
  /** Columns whose default draws from a sequence (serial, identity). */
  sequences: Array<{ column: string; schema: string; name: string; increment: number }>;
  /** Its inheritance children (INHERITS; partitions are not): a read or write of it reaches their rows. */
  children: number[];
  /**
   * A BEFORE UPDATE row trigger on it (or on one of its partitions) may give a row another key: an
   * UPDATE's rows before are then joined by their old keys, as for a SET that assigns a key.
   */
  keyTriggers: boolean;
}

/** The images a write's RETURNING clause hands back, as SQL expressions (see Catalog.writeImages). */
export interface WriteImages {
  after?: string;
  before?: string;
  /** The oid of the table each row is in: set when a row may be an inheritance child's. */
  table?: string;
  /** An upsert's: whether each row was inserted (true) or updated by its ON CONFLICT DO UPDATE. */
  inserted?: string;
}

/** Minimal query surface: a pg client or pool (rows as objects). */
export interface CatalogQueryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

const SYSTEM = `n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'`;

/** Reads every user table's description in a few bulk queries. */
export async function readCatalog(db: CatalogQueryable): Promise<Catalog> {
  const tables = await db.query(
    `SELECT c.oid::int AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
            has_table_privilege(c.oid, 'SELECT') AS readable,
            ARRAY(SELECT i.inhrelid::int FROM pg_inherits i JOIN pg_class ch ON ch.oid = i.inhrelid
                   WHERE i.inhparent = c.oid AND NOT ch.relispartition) AS children
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND ${SYSTEM}`,
  );
  const columns = await db.query(
    `SELECT a.attrelid::int AS rel, a.attnum::int AS attnum, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            ${jsonTextSql('a.atttypid')} AS text
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND ${SYSTEM} AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attrelid, a.attnum`,
  );
  const keys = await db.query(
    `SELECT k.conrelid::int AS rel, k.contype::text AS type, k.confrelid::int AS ref,
            ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.o) AS cols,
            ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.o) AS ref_cols
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype IN ('p', 'f') AND ${SYSTEM}`,
  );
  // A column draws from the sequence it owns (serial, identity) and from the one its default calls
  // nextval of: a sequence several tables share, an inheritance child's inherited default.
  const sequences = await db.query(
    `SELECT DISTINCT x.rel, a.attname AS col, sn.nspname AS schema, s.relname AS name,
            q.seqincrement::text AS increment
       FROM (SELECT d.refobjid AS rel, d.refobjsubid AS attnum, d.objid AS seq FROM pg_depend d
              WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
                AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0
             UNION
             SELECT ad.adrelid, ad.adnum, d.refobjid FROM pg_attrdef ad
               JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                AND d.refclassid = 'pg_class'::regclass) x
       JOIN pg_class s ON s.oid = x.seq AND s.relkind = 'S'
       JOIN pg_namespace sn ON sn.oid = s.relnamespace JOIN pg_sequence q ON q.seqrelid = s.oid
       JOIN pg_attribute a ON a.attrelid = x.rel AND a.attnum = x.attnum`,
  );
  // A table without a primary key is known by a unique index of NOT NULL columns, as logical
  // replication's identity is (not partial, no expression; the fewest columns, then the oldest).
  const uniques = await db.query(
    `SELECT DISTINCT ON (i.indrelid) i.indrelid::int AS rel,
            ARRAY(SELECT a.attname::text FROM unnest((i.indkey::int2[])[0:i.indnkeyatts - 1]) WITH ORDINALITY u(n, o)
                    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.n ORDER BY u.o) AS cols
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE i.indisunique AND NOT i.indisprimary AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
        AND ${SYSTEM}
        AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = i.indrelid
                         AND a.attnum = ANY((i.indkey::int2[])[0:i.indnkeyatts - 1]) AND NOT a.attnotnull)
      ORDER BY i.indrelid, i.indnkeyatts, i.indexrelid`,
  );
  // Enabled BEFORE UPDATE row triggers (tgtype: ROW 1, BEFORE 2, UPDATE 16), a partition's counted
  // for its partitioned ancestors too (an UPDATE of the parent runs the partition's).
  const triggers = await db.query(
    `SELECT DISTINCT a.relid::int AS rel FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       CROSS JOIN LATERAL (SELECT t.tgrelid AS relid UNION SELECT x.relid FROM pg_partition_ancestors(t.tgrelid) x) a
      WHERE NOT t.tgisinternal AND t.tgenabled <> 'D' AND t.tgtype & 19 = 19 AND ${SYSTEM}`,
  );
  // name[] is not among the types pg parses: as text[] it arrives as an array, not as "{public}".
  const searchPath = await db.query('SELECT current_schemas(false)::text[] AS path');
  const byOid = new Map<number, CatalogTable>();
  for (const t of tables.rows) {
    byOid.set(t.oid as number, {
      oid: t.oid as number,
      schema: t.schema as string,
      name: t.name as string,
      kind: t.kind as string,
      readable: t.readable === true,
      columns: [],
      primaryKey: [],
      foreignKeys: [],
      sequences: [],
      children: (t.children as number[] | null) ?? [],
      keyTriggers: false,
    });
  }
  for (const c of columns.rows) {
    byOid.get(c.rel as number)?.columns.push({
      name: c.name as string,
      attnum: c.attnum as number,
      type: c.type as string,
      text: c.text === true,
    });
  }
  for (const k of keys.rows) {
    const table = byOid.get(k.rel as number);
    if (table === undefined) continue;
    if (k.type === 'p') table.primaryKey = k.cols as string[];
    else
      table.foreignKeys.push({
        columns: k.cols as string[],
        refOid: k.ref as number,
        refColumns: k.ref_cols as string[],
      });
  }
  for (const s of sequences.rows) {
    byOid.get(Number(s.rel))?.sequences.push({
      column: s.col as string,
      schema: s.schema as string,
      name: s.name as string,
      increment: Number(s.increment),
    });
  }
  for (const t of triggers.rows) {
    const table = byOid.get(t.rel as number);
    if (table !== undefined) table.keyTriggers = true;
  }
  for (const u of uniques.rows) {
    const table = byOid.get(u.rel as number);
    if (table !== undefined && table.primaryKey.length === 0) table.primaryKey = u.cols as string[];
  }
  // An inheritance child without a key of its own: its rows are known by its ancestor's key.
  const inherited = (t: CatalogTable, seen: Set<number>): string[] => {
    if (t.primaryKey.length > 0 || seen.has(t.oid)) return t.primaryKey;
    seen.add(t.oid);
    const parent = [...byOid.values()].find((p) => p.children.includes(t.oid) && inherited(p, seen).length > 0);
    return parent === undefined ? [] : inherited(parent, seen);
  };
  for (const t of byOid.values()) if (t.primaryKey.length === 0) t.primaryKey = inherited(t, new Set());
  return new Catalog(byOid, (searchPath.rows[0]?.path as string[] | undefined) ?? ['public']);
}

export class Catalog {
  private readonly byName = new Map<string, CatalogTable>();
  private readonly norms = new Map<string, string>();

  constructor(
    readonly tables: ReadonlyMap<number, CatalogTable>,
    private readonly searchPath: string[],
  ) {
    for (const t of tables.values()) this.byName.set(`${t.schema}\u0000${t.name}`, t);
  }

  /**
   * The table a statement names (schema-qualified, or found along `searchPath`: the connection's
   * own, else the database's as tapedeck's connection has it).
   */
  resolve(
    name: { schema?: string; name: string },
    searchPath: readonly string[] = this.searchPath,
  ): CatalogTable | undefined {
    if (name.schema !== undefined) return this.byName.get(`${name.schema}\u0000${name.name}`);
    for (const schema of searchPath) {
      const table = this.byName.get(`${schema}\u0000${name.name}`);
      if (table !== undefined) return table;
    }
    return undefined;
  }

  /**
   * The row `ref` (an alias or table name in scope) as the snapshot's JSON: bigint/numeric and
   * json-based values (json, jsonb, their domains and arrays) as text, timestamptz as UTC ISO with microseconds, everything else as to_jsonb gives it — the
   * normalisation src/postgres/snapshot.ts applies, written inline.
   */
  rowJson(table: CatalogTable, ref: string): string {
    const cacheKey = `${table.oid}\u0000${ref}`;
    let sql = this.norms.get(cacheKey);
    if (sql !== undefined) return sql;
    const r = quoteIdent(ref);
    const pairs = table.columns.map((c) => {
      const col = `${r}.${quoteIdent(c.name)}`;
      const kind = normalizedKind(c.type);
      const value = kind === 'num' || c.text ? `${col}::text` : kind === 'tstz' ? utcTimestampSql(col) : col;
      return `'${c.name.replaceAll("'", "''")}', ${value}`;
    });
    // jsonb_build_object takes at most 100 arguments: 50 columns a call, joined.
    const parts: string[] = [];
    for (let i = 0; i < pairs.length; i += 50) parts.push(`jsonb_build_object(${pairs.slice(i, i + 50).join(', ')})`);
    sql = parts.length === 0 ? `'{}'::jsonb` : parts.join(' || ');
    this.norms.set(cacheKey, sql);
    return sql;
  }

  /** Its inheritance descendants (children, theirs, …), each once; not its partitions. */
  descendants(table: CatalogTable): CatalogTable[] {
    const out = new Map<number, CatalogTable>();
    const visit = (t: CatalogTable) => {
      for (const oid of t.children) {
        const child = this.tables.get(oid);
        if (child === undefined || out.has(oid) || oid === table.oid) continue;
        out.set(oid, child);
        visit(child);
      }
    };
    visit(table);
    return [...out.values()];
  }

  /**
   * What a write's RETURNING clause hands back of each row it wrote: the row after it (not for a
   * DELETE), the row before it (a DELETE's row; an UPDATE's or upsert's looked up in the statement's
   * own snapshot). An UPDATE or DELETE of an inheritance parent reaches its descendants' rows too,
   * which RETURNING gives in the parent's columns alone: each of those is imaged in its own table's
   * columns (its row before, under the parent's key, with the parent's columns as they are after),
   * and `table` says which table each row is in.
   */
  writeImages(table: CatalogTable, ref: string, kind: 'insert' | 'update' | 'delete', upsert: boolean): WriteImages {
    const after = kind === 'delete' ? undefined : this.rowJson(table, ref);
    const before =
      kind === 'delete'
        ? this.rowJson(table, ref)
        : kind === 'update' || upsert
          ? this.beforeJson(table, ref)
          : undefined;
    // An upsert's row may have been inserted or updated, and an update may have given it another key
    // (a SET assigning one, a BEFORE UPDATE trigger), which the before looked up by its key after
    // cannot tell from an insert: a row's xmax says (0: inserted). Not on a partitioned table (its
    // RETURNING has no system columns but tableoid).
    const inserted = kind === 'insert' && upsert && table.kind === 'r' ? `(${quoteIdent(ref)}.xmax = 0)` : undefined;
    const kids = kind === 'insert' ? [] : this.descendants(table);
    if (kids.length === 0)
      return {
        ...(after === undefined ? {} : { after }),
        ...(before === undefined ? {} : { before }),
        ...(inserted === undefined ? {} : { inserted }),
      };
    const r = quoteIdent(ref);
    // A descendant the user may not read, or a parent without a key, is imaged as NULL: not followed.
    const own = (kid: CatalogTable) => (kid.readable ? this.beforeJson(kid, ref, table.primaryKey) : undefined);
    const byTable = (expr: (kid: CatalogTable) => string | undefined, otherwise: string | undefined) =>
      `CASE ${r}.tableoid ${kids.map((k) => `WHEN ${k.oid} THEN ${expr(k) ?? 'NULL'}`).join(' ')} ELSE ${otherwise ?? 'NULL'} END`;
    return {
      ...(after === undefined ? {} : { after: byTable((k) => own(k) && `(${own(k)} || ${after})`, after) }),
      before: byTable(own, before),
      table: `${r}.tableoid::int`,
    };
  }

  /**
   * An UPDATE that assigns a key column finds its rows' old images by their old keys: `source`
   * joins each row as it was (its image, table and key under names the agent's columns never
   * clash with), `match` ties it to the row the UPDATE is changing (in WHERE, `ref` is the row
   * before), and `before` is its image in RETURNING (withOldRow in sql-plan.ts places them).
   */
  oldRowJoin(table: CatalogTable, ref: string): { source: string; match: string; before: string } | undefined {
    if (table.primaryKey.length === 0) return undefined;
    const o = '_tapedeck_o';
    const keys = table.primaryKey.map((c, i) => `${o}.${quoteIdent(c)} AS __tapedeck_k${i}`).join(', ');
    const source = `(SELECT ${this.rowJson(table, o)} AS __tapedeck_r, ${o}.tableoid AS __tapedeck_t, ${keys} FROM ${tableRef(table.schema, table.name)} ${o}) AS _tapedeck_old`;
    const r = quoteIdent(ref);
    const match = [
      ...table.primaryKey.map((c, i) => `_tapedeck_old.__tapedeck_k${i} = ${r}.${quoteIdent(c)}`),
      `_tapedeck_old.__tapedeck_t = ${r}.tableoid`,
    ].join(' AND ');
    return { source, match: `(${match})`, before: '_tapedeck_old.__tapedeck_r' };
  }

  /**
   * The row as it was before the statement that is running, looked up by primary key (or the
   * columns `key` names) in the statement's own snapshot (a sub-select in RETURNING does not see
   * the statement's changes).
   */
  beforeJson(table: CatalogTable, ref: string, key: string[] = table.primaryKey): string | undefined {
    if (key.length === 0) return undefined;
    const match = key.map((c) => `_tapedeck_old.${quoteIdent(c)} = ${quoteIdent(ref)}.${quoteIdent(c)}`).join(' AND ');
    // The very row: an inheritance child may hold a row under its parent's key, and a write to the
    // parent reaches it too (one row a sub-select, or the agent's statement fails).
    // LIMIT 1: a key a child holds by inheritance is not unique in it, and a second row would fail the agent's statement.
    return `(SELECT ${this.rowJson(table, '_tapedeck_old')} FROM ${tableRef(table.schema, table.name)} _tapedeck_old WHERE ${match} AND _tapedeck_old.tableoid = ${quoteIdent(ref)}.tableoid LIMIT 1)`;
  }

  /**
   * A keyed read of chosen rows: `columns` must be a key (the primary key, or the columns a
   * foreign key references). Parameters: one array per column. With `positions`, each row also
   * comes with `at`: the (1-based) positions in the parameter arrays of the keys that match it.
   */
  keyedRead(table: CatalogTable, columns: string[], options: { positions?: boolean } = {}): string {
    const types = columns.map((c) => table.columns.find((col) => col.name === c)?.type ?? 'text');
    const cols = columns.map((c) => `_tapedeck_r.${quoteIdent(c)}`);
    const arrays = types.map((t, i) => `$${i + 1}::${t}[]`);
    const where =
      columns.length === 1
        ? `${cols[0]} = ANY(${arrays[0]})`
        : `(${cols.join(', ')}) IN (SELECT * FROM unnest(${arrays.join(', ')}))`;
    let at = '';
    if (options.positions === true) {
      const names = columns.map((_, i) => `k${i}`);
      at =
        columns.length === 1
          ? `, array_positions(${arrays[0]}, ${cols[0]}) AS at`
          : `, ARRAY(SELECT _tapedeck_k.i::int FROM unnest(${arrays.join(', ')}) WITH ORDINALITY _tapedeck_k(${names.join(', ')}, i)
                WHERE (${names.map((n) => `_tapedeck_k.${n}`).join(', ')}) = (${cols.join(', ')})) AS at`;
    }
    // The table's own rows: an inheritance child's under the same key are the child's (read as its own).
    return `SELECT ${this.rowJson(table, '_tapedeck_r')} AS r${at} FROM ${tableRef(table.schema, table.name)} _tapedeck_r WHERE ${where} AND ${ownRowSql('_tapedeck_r', table.schema, table.name)}`;
  }
}

/** The key of a row in the snapshot's JSON form: its primary key columns (or all columns when there is none). */
export function keyOf(table: Pick<CatalogTable, 'primaryKey'>, row: Row): Row {
  const columns = table.primaryKey.length > 0 ? table.primaryKey : Object.keys(row).sort();
  const key: Row = {};
  for (const c of columns) key[c] = row[c] ?? null;
  return key;
}
