// Reading, from the catalog, what a table holds its rows to beyond keys: its CHECK constraints (the
// expression as data), its EXCLUDE constraints on plain columns, and its partitioning (PARTITION BY
// and each partition's bound, as data). describeTables (snapshot.ts) adds them to each table; what
// is outside the data forms stays named in `unbuilt` (describe-objects.ts).
import type { DbTable } from '../recording/index.js';
import { EXCLUSION_OPERATORS, parseGeneratedExpression, parsePartitionBound } from '../recording/index.js';
import { castsKept, type Queryable } from './sql.js';

type Extras = Pick<DbTable, 'checks' | 'exclusions' | 'partitionBy' | 'partitions'>;

async function rowsOf<T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

/** The storage parameters of an index that shape an approximate index's answers (pgvector's). */
function indexOptions(options: string[] | null): { options?: NonNullable<DbTable['indexes']>[number]['options'] } {
  const out: Record<string, number> = {};
  for (const o of options ?? []) {
    const m = /^(m|ef_construction|lists)=(\d{1,7})$/.exec(o);
    if (m) out[m[1] as string] = Number(m[2]);
  }
  return Object.keys(out).length > 0 ? { options: out } : {};
}

const INDEX_METHODS = ['btree', 'hash', 'gin', 'gist', 'brin', 'spgist', 'hnsw', 'ivfflat'] as const;

/**
 * The indexes on plain columns of the table or partition `oid` that are its own: no constraint
 * owns them (a key is described as one), and none is a partition's copy of its parent's index
 * (the sandbox's partition gets that as it is made).
 */
export async function describeIndexes(db: Queryable, oid: number): Promise<NonNullable<DbTable['indexes']>> {
  const idx = await rowsOf<{
    name: string;
    unique: boolean;
    method: string;
    cols: string[];
    plain: boolean;
    options: string[] | null;
    opclasses: Array<{ schema: string; name: string; extension?: string } | null> | null;
  }>(
    db,
    `SELECT ic.relname AS name, i.indisunique AS unique, am.amname AS method,
            (SELECT jsonb_agg(CASE WHEN oc.opcdefault THEN NULL ELSE jsonb_strip_nulls(jsonb_build_object(
                      'schema', on1.nspname, 'name', oc.opcname, 'extension', ox.extname)) END ORDER BY k.n)
               FROM unnest(i.indclass::oid[]) WITH ORDINALITY k(o, n) JOIN pg_opclass oc ON oc.oid = k.o
               JOIN pg_namespace on1 ON on1.oid = oc.opcnamespace
               LEFT JOIN pg_depend od ON od.classid = 'pg_opclass'::regclass AND od.objid = oc.oid
                    AND od.refclassid = 'pg_extension'::regclass AND od.deptype = 'e'
               LEFT JOIN pg_extension ox ON ox.oid = od.refobjid) AS opclasses,
            ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
                    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o) AS cols,
            (i.indexprs IS NULL AND i.indpred IS NULL AND NOT (0 = ANY(i.indkey::int2[]))) AS plain,
            ic.reloptions::text[] AS options
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
      WHERE i.indrelid = $1 AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
        AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)
      ORDER BY ic.relname`,
    [oid],
  );
  return idx
    .filter((i) => i.plain && (INDEX_METHODS as readonly string[]).includes(i.method) && i.cols.length > 0)
    .map((i) => ({
      name: i.name,
      columns: i.cols,
      unique: i.unique,
      method: i.method as (typeof INDEX_METHODS)[number],
      ...(i.opclasses?.some((o) => o !== null) ? { opclasses: i.opclasses } : {}),
      ...indexOptions(i.options),
    }));
}

const STRATEGY = { r: 'range', l: 'list', h: 'hash' } as const;

/** PARTITION BY of the partitioned table `oid`: undefined for a plain table or a key with an expression. */
async function partitionBy(db: Queryable, oid: number): Promise<DbTable['partitionBy']> {
  const [row] = await rowsOf<{ strategy: keyof typeof STRATEGY; cols: string[]; plain: boolean }>(
    db,
    `SELECT p.partstrat::text AS strategy, NOT (0 = ANY(p.partattrs::int2[])) AS plain,
            ARRAY(SELECT a.attname::text FROM unnest(p.partattrs::int2[]) WITH ORDINALITY k(n, o)
                    JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = k.n ORDER BY k.o) AS cols
       FROM pg_partitioned_table p WHERE p.partrelid = $1`,
    [oid],
  );
  if (row === undefined || !row.plain || row.cols.length === 0 || STRATEGY[row.strategy] === undefined)
    return undefined;
  return { strategy: STRATEGY[row.strategy], columns: row.cols };
}

/**
 * The CHECK, EXCLUDE and partitioning of the table `oid` whose columns are `columns`, each part
 * present only when there is something to describe.
 */
/**
 * The CHECK constraints of the table or partition `oid` that are its own: an inherited one
 * (coninhcount > 0: a parent's, a partitioned table's) comes with the table it is declared on.
 */
async function describeChecks(
  db: Queryable,
  oid: number,
  columns: ReadonlySet<string>,
): Promise<NonNullable<Extras['checks']>> {
  const checkRows = await rowsOf<{ name: string; def: string; noinherit: boolean }>(
    db,
    `SELECT conname AS name, pg_get_expr(conbin, conrelid) AS def, connoinherit AS noinherit FROM pg_constraint
      WHERE conrelid = $1 AND contype = 'c' AND coninhcount = 0 ORDER BY conname`,
    [oid],
  );
  const checks: NonNullable<Extras['checks']> = [];
  for (const r of checkRows) {
    const expression = parseGeneratedExpression(r.def, columns);
    // One with a cast to a type the sandbox would not keep stays named in `unbuilt`.
    if (expression !== undefined && castsKept(expression))
      checks.push({ name: r.name, expression, ...(r.noinherit ? { noInherit: true } : {}) });
  }
  return checks;
}

export async function describeTableExtras(db: Queryable, oid: number, columns: ReadonlySet<string>): Promise<Extras> {
  const checks = await describeChecks(db, oid, columns);
  const exclusionRows = await rowsOf<{
    name: string;
    method: string;
    cols: string[];
    ops: string[];
    plain: boolean;
    deferrable: boolean;
    deferred: boolean;
    opclasses: Array<{ schema: string; name: string; extension?: string; builtin: boolean }>;
  }>(
    db,
    `SELECT co.conname AS name, am.amname AS method, co.condeferrable AS deferrable, co.condeferred AS deferred,
            (i.indexprs IS NULL AND i.indpred IS NULL AND NOT (0 = ANY(i.indkey::int2[]))) AS plain,
            ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
                    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o) AS cols,
            ARRAY(SELECT op.oprname::text FROM unnest(co.conexclop) WITH ORDINALITY k(o, n)
                    JOIN pg_operator op ON op.oid = k.o ORDER BY k.n) AS ops,
            (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('schema', on1.nspname, 'name', oc.opcname,
                      'extension', ox.extname, 'builtin', oc.opcdefault AND on1.nspname = 'pg_catalog')) ORDER BY k.n)
               FROM unnest(i.indclass::oid[]) WITH ORDINALITY k(o, n) JOIN pg_opclass oc ON oc.oid = k.o
               JOIN pg_namespace on1 ON on1.oid = oc.opcnamespace
               LEFT JOIN pg_depend od ON od.classid = 'pg_opclass'::regclass AND od.objid = oc.oid
                    AND od.refclassid = 'pg_extension'::regclass AND od.deptype = 'e'
               LEFT JOIN pg_extension ox ON ox.oid = od.refobjid) AS opclasses
       FROM pg_constraint co JOIN pg_index i ON i.indexrelid = co.conindid
       JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
      WHERE co.conrelid = $1 AND co.contype = 'x' AND co.coninhcount = 0 ORDER BY co.conname`,
    [oid],
  );
  const exclusions: NonNullable<Extras['exclusions']> = [];
  const methods = ['gist', 'spgist', 'btree', 'hash'] as const;
  for (const r of exclusionRows) {
    const method = methods.find((m) => m === r.method);
    const operators = r.ops.map((o) => EXCLUSION_OPERATORS.find((e) => e === o));
    if (!r.plain || method === undefined || operators.some((o) => o === undefined)) continue;
    if (r.cols.length !== operators.length || r.opclasses.length !== r.cols.length) continue;
    exclusions.push({
      name: r.name,
      method,
      elements: r.cols.map((column, k) => {
        const o = r.opclasses[k] as (typeof r.opclasses)[number];
        // An operator class is named unless it is Postgres's own default (an extension's, such as
        // btree_gist's for an integer, is named so a sandbox without the extension says so).
        const opclass = o.builtin
          ? null
          : { schema: o.schema, name: o.name, ...(o.extension !== undefined ? { extension: o.extension } : {}) };
        return { column, opclass, operator: operators[k] as (typeof EXCLUSION_OPERATORS)[number] };
      }),
      ...(r.deferrable ? { deferrable: r.deferred ? ('deferred' as const) : ('immediate' as const) } : {}),
    });
  }
  const by = await partitionBy(db, oid);
  const partitions: NonNullable<Extras['partitions']> = [];
  if (by !== undefined) {
    const rows = await rowsOf<{
      oid: number;
      parent: number;
      partitioned: boolean;
      schema: string;
      name: string;
      p_schema: string;
      p_name: string;
      bound: string;
    }>(
      db,
      `SELECT t.relid::oid::int AS oid, t.parentrelid::oid::int AS parent, c.relkind = 'p' AS partitioned,
              n.nspname AS schema, c.relname AS name, pn.nspname AS p_schema, pc.relname AS p_name,
              pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_partition_tree($1) t JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_class pc ON pc.oid = t.parentrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace
        WHERE t.level > 0 ORDER BY t.level, n.nspname, c.relname`,
      [oid],
    );
    const described = new Set<number>([oid]);
    for (const r of rows) {
      const bound = parsePartitionBound(r.bound);
      const sub = r.partitioned ? await partitionBy(db, r.oid) : undefined;
      // A partition under one that is not described (its bound or key outside the data forms) is not either.
      if (bound === undefined || !described.has(r.parent) || (r.partitioned && sub === undefined)) continue;
      described.add(r.oid);
      const indexes = await describeIndexes(db, r.oid);
      // A partition has its parent's columns, by name (their positions may differ).
      const own = await describeChecks(db, r.oid, columns);
      partitions.push({
        schema: r.schema,
        name: r.name,
        of: { schema: r.p_schema, name: r.p_name },
        bound,
        ...(sub !== undefined ? { partitionBy: sub } : {}),
        ...(indexes.length > 0 ? { indexes } : {}),
        ...(own.length > 0 ? { checks: own } : {}),
      });
    }
  }
  return {
    ...(checks.length > 0 ? { checks } : {}),
    ...(exclusions.length > 0 ? { exclusions } : {}),
    ...(by !== undefined ? { partitionBy: by } : {}),
    ...(partitions.length > 0 ? { partitions } : {}),
  };
}
