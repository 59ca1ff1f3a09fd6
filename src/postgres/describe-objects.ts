// Reading, from the catalog, the schema objects around a database's tables: the enum types, the
// domains, the extensions the database holds, and, by name, what a sandbox does not rebuild.
// The snapshotter (snapshot.ts) and the observed world's description both use it.
import type { DbSnapshot, DbTable, GeneratedExpr, PgObjectRef } from '../recording/index.js';
import { parseGeneratedExpression } from '../recording/index.js';
import { CAPTURE_TRIGGER_PREFIX } from './locks.js';
import { castsKept, type Queryable } from './sql.js';

/** In a domain's CHECK, VALUE: the column Postgres resolves it as. */
const VALUE: ReadonlySet<string> = new Set(['value']);

async function rowsOf<T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

/**
 * The lateral join naming a type that is not built in (`typeOid`'s, or its array's element type's):
 * columns `<as>_schema`, `<as>_name`, `<as>_ext` (the extension that owns it), all NULL for a
 * built-in type. Catalog SQL only; `typeOid` and `as` are tapedeck's own expressions.
 */
export function udtJoin(typeOid: string, as: string): string {
  return `LEFT JOIN LATERAL (
      SELECT en.nspname AS ${as}_schema, et.typname AS ${as}_name, ex.extname AS ${as}_ext, et.typtype AS ${as}_kind
        FROM pg_type t0
        JOIN pg_type et ON et.oid = CASE WHEN t0.typcategory = 'A' AND t0.typelem <> 0 THEN t0.typelem ELSE t0.oid END
        JOIN pg_namespace en ON en.oid = et.typnamespace
        LEFT JOIN pg_depend xd ON xd.classid = 'pg_type'::regclass AND xd.objid = et.oid
             AND xd.refclassid = 'pg_extension'::regclass AND xd.deptype = 'e'
        LEFT JOIN pg_extension ex ON ex.oid = xd.refobjid
       WHERE t0.oid = ${typeOid} AND en.nspname NOT IN ('pg_catalog', 'information_schema')
       LIMIT 1) ${as} ON true`;
}

/** The object reference read through udtJoin's columns, or undefined for a built-in type. */
export function udtOf(schema: string | null, name: string | null, extension: string | null): PgObjectRef | undefined {
  if (schema === null || name === null) return undefined;
  return { schema, name, ...(extension !== null ? { extension } : {}) };
}

/**
 * The composite types (CREATE TYPE … AS (…)) of `schemas` and those the tables' columns use, their
 * attributes in order; each after the composites it holds.
 */
export async function describeComposites(
  db: Queryable,
  schemas: string[],
  tables: Array<Pick<DbTable, 'columns'>>,
): Promise<NonNullable<DbSnapshot['composites']>> {
  const used = tables.flatMap((t) => t.columns.flatMap((c) => (c.udt ? [c.udt] : [])));
  const rows = await rowsOf<{
    schema: string;
    name: string;
    attr: string;
    type: string;
    a_schema: string | null;
    a_name: string | null;
    a_ext: string | null;
  }>(
    db,
    `SELECT n.nspname AS schema, t.typname AS name, a.attname AS attr, format_type(a.atttypid, a.atttypmod) AS type,
            at.at_schema AS a_schema, at.at_name AS a_name, at.at_ext AS a_ext
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       JOIN pg_class c ON c.oid = t.typrelid AND c.relkind = 'c'
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       ${udtJoin('a.atttypid', 'at')}
      WHERE t.typtype = 'c' AND (n.nspname = ANY($1::text[])
             OR (n.nspname::text, t.typname::text) IN (SELECT * FROM unnest($2::text[], $3::text[])))
      ORDER BY 1, 2, a.attnum`,
    [schemas, used.map((u) => u.schema), used.map((u) => u.name)],
  );
  const byKey = new Map<string, NonNullable<DbSnapshot['composites']>[number]>();
  for (const r of rows) {
    const k = `${r.schema}.${r.name}`;
    const composite = byKey.get(k) ?? { schema: r.schema, name: r.name, attributes: [] };
    const udt = udtOf(r.a_schema, r.a_name, r.a_ext);
    composite.attributes.push({ name: r.attr, type: r.type, ...(udt ? { udt } : {}) });
    byKey.set(k, composite);
  }
  const ordered: NonNullable<DbSnapshot['composites']> = [];
  const seen = new Set<string>();
  const visit = (c: NonNullable<DbSnapshot['composites']>[number]) => {
    const k = `${c.schema}.${c.name}`;
    if (seen.has(k)) return;
    seen.add(k);
    for (const a of c.attributes) {
      const inner = a.udt ? byKey.get(`${a.udt.schema}.${a.udt.name}`) : undefined;
      if (inner) visit(inner);
    }
    ordered.push(c);
  };
  for (const c of byKey.values()) visit(c);
  return ordered;
}

/** The enum types of `schemas`, their labels in order. */
export async function describeEnums(db: Queryable, schemas: string[]): Promise<NonNullable<DbSnapshot['enums']>> {
  return rowsOf<{ schema: string; name: string; labels: string[] }>(
    db,
    `SELECT n.nspname AS schema, t.typname AS name,
            ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS labels
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE t.typtype = 'e' AND n.nspname = ANY($1::text[]) ORDER BY 1, 2`,
    [schemas],
  );
}

/** The extensions the database holds (plpgsql, every database's, aside), with their schemas. */
export async function describeExtensions(db: Queryable): Promise<NonNullable<DbSnapshot['extensions']>> {
  return rowsOf<{ name: string; schema: string }>(
    db,
    `SELECT e.extname::text AS name, n.nspname::text AS schema FROM pg_extension e
       JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname <> 'plpgsql' ORDER BY 1`,
  );
}

/**
 * The domains of `schemas` and those the described columns are of, wherever they live, each with
 * its base type; a domain over a domain after the one it is over.
 */
export async function describeDomains(
  db: Queryable,
  schemas: string[],
  tables: Array<Pick<DbTable, 'columns'>>,
): Promise<NonNullable<DbSnapshot['domains']>> {
  const used = tables.flatMap((t) => t.columns.flatMap((c) => (c.udt ? [c.udt] : [])));
  const rows = await rowsOf<{
    schema: string;
    name: string;
    type: string;
    notnull: boolean;
    b_schema: string | null;
    b_name: string | null;
    b_ext: string | null;
  }>(
    db,
    `SELECT n.nspname AS schema, t.typname AS name, format_type(t.typbasetype, t.typtypmod) AS type,
            t.typnotnull AS notnull, b.b_schema, b.b_name, b.b_ext
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       ${udtJoin('t.typbasetype', 'b')}
      WHERE t.typtype = 'd' AND (n.nspname = ANY($1::text[]) 
             OR (n.nspname::text, t.typname::text) IN (SELECT * FROM unnest($2::text[], $3::text[])))
      ORDER BY 1, 2`,
    [schemas, used.map((u) => u.schema), used.map((u) => u.name)],
  );
  // A domain's CHECKs as data: VALUE reads as a column named `value` (the name Postgres resolves it
  // by, quoted or not); one outside the grammar, or casting to a type a sandbox does not keep, is not.
  const checkRows = await rowsOf<{ schema: string; domain: string; name: string; def: string }>(
    db,
    `SELECT n.nspname AS schema, t.typname AS domain, co.conname AS name, pg_get_expr(co.conbin, 0) AS def
       FROM pg_constraint co JOIN pg_type t ON t.oid = co.contypid JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE co.contype = 'c' ORDER BY 1, 2, 3`,
  );
  const checksOf = new Map<string, Array<{ name: string; expression: GeneratedExpr }>>();
  for (const r of checkRows) {
    const expression = parseGeneratedExpression(r.def, VALUE);
    if (expression === undefined || !castsKept(expression)) continue;
    const k = `${r.schema}.${r.domain}`;
    checksOf.set(k, [...(checksOf.get(k) ?? []), { name: r.name, expression }]);
  }
  const domains = rows.map((r) => {
    const udt = udtOf(r.b_schema, r.b_name, r.b_ext);
    const checks = checksOf.get(`${r.schema}.${r.name}`);
    return {
      schema: r.schema,
      name: r.name,
      type: r.type,
      ...(udt ? { udt } : {}),
      nullable: !r.notnull,
      ...(checks ? { checks } : {}),
    };
  });
  // Domains the columns' domains are over come first.
  const byKey = new Map(domains.map((d) => [`${d.schema}.${d.name}`, d]));
  const ordered: typeof domains = [];
  const seen = new Set<string>();
  const visit = (d: (typeof domains)[number]) => {
    const k = `${d.schema}.${d.name}`;
    if (seen.has(k)) return;
    seen.add(k);
    const base = d.udt ? byKey.get(`${d.udt.schema}.${d.udt.name}`) : undefined;
    if (base) visit(base);
    ordered.push(d);
  };
  domains.forEach(visit);
  return ordered;
}

/**
 * The objects of `schemas` a sandbox may not rebuild (views, triggers, checks, a domain's checks,
 * policies, rules, functions, exclusion constraints, partitions), by name: their definitions are
 * SQL, which is never run from a recording; describeObjects drops the checks, exclusions and
 * partitions the tables describe as data. An inherited check is named on the table it is declared
 * on. tapedeck's own capture triggers are left out.
 */
export async function describeUnbuilt(db: Queryable, schemas: string[]): Promise<NonNullable<DbSnapshot['unbuilt']>> {
  const rows = await rowsOf<{
    kind: NonNullable<DbSnapshot['unbuilt']>[number]['kind'];
    schema: string;
    name: string;
    tbl: string | null;
  }>(
    db,
    `SELECT DISTINCT kind, schema, name, tbl FROM (
       SELECT CASE c.relkind WHEN 'v' THEN 'view' ELSE 'materialized view' END AS kind, n.nspname AS schema,
              c.relname AS name, NULL::name AS tbl
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('v', 'm')
       UNION ALL SELECT 'trigger', n.nspname, t.tgname, c.relname FROM pg_trigger t
         JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND left(t.tgname, $2) <> $3
       UNION ALL SELECT CASE co.contype WHEN 'c' THEN 'check' ELSE 'exclusion constraint' END, n.nspname, co.conname, c.relname
         FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE co.contype IN ('c', 'x') AND co.coninhcount = 0
       UNION ALL SELECT 'check', n.nspname, co.conname, t.typname FROM pg_constraint co
         JOIN pg_type t ON t.oid = co.contypid JOIN pg_namespace n ON n.oid = t.typnamespace WHERE co.contype = 'c'
       UNION ALL SELECT 'partition', n.nspname, c.relname, p.relname FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_inherits i ON i.inhrelid = c.oid
         JOIN pg_class p ON p.oid = i.inhparent WHERE c.relispartition AND c.relkind IN ('r', 'p')
       UNION ALL SELECT 'policy', n.nspname, p.polname, c.relname FROM pg_policy p
         JOIN pg_class c ON c.oid = p.polrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       UNION ALL SELECT 'rule', n.nspname, r.rulename, c.relname FROM pg_rewrite r
         JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE r.rulename <> '_RETURN'
       UNION ALL SELECT 'function', n.nspname, p.proname, NULL FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
     ) o WHERE schema = ANY($1::text[]) ORDER BY kind, schema, tbl NULLS FIRST, name LIMIT 10000`,
    [schemas, CAPTURE_TRIGGER_PREFIX.length, CAPTURE_TRIGGER_PREFIX],
  );
  return rows.map((r) => ({
    kind: r.kind,
    schema: r.schema,
    name: r.name,
    ...(r.tbl !== null ? { table: r.tbl } : {}),
  }));
}

/**
 * The column defaults of `tables` the description leaves out (an expression outside the allow-list
 * of src/recording/catalog-expr.ts, such as pgcrypto's `digest(…)`), as `unbuilt` entries named by
 * their column: a sandbox's insert that omits the column gets NULL there.
 */
async function undescribedDefaults(
  db: Queryable,
  tables: Array<Pick<DbTable, 'schema' | 'name' | 'columns'>>,
): Promise<NonNullable<DbSnapshot['unbuilt']>> {
  const rows = await rowsOf<{ schema: string; tbl: string; col: string }>(
    db,
    `SELECT n.nspname AS schema, c.relname AS tbl, a.attname AS col FROM pg_attrdef d
       JOIN pg_class c ON c.oid = d.adrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
      WHERE a.attgenerated = '' AND a.attidentity = '' AND NOT a.attisdropped
        AND (n.nspname::text, c.relname::text) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [tables.map((t) => t.schema), tables.map((t) => t.name)],
  );
  const described = new Set(
    tables.flatMap((t) =>
      t.columns.filter((c) => c.default !== undefined).map((c) => JSON.stringify([t.schema, t.name, c.name])),
    ),
  );
  return rows
    .filter((r) => !described.has(JSON.stringify([r.schema, r.tbl, r.col])))
    .map((r) => ({ kind: 'default' as const, schema: r.schema, name: r.col, table: r.tbl }));
}

/** What a snapshot describes beside its tables and sequences, each part present only when not empty. */
export async function describeObjects(
  db: Queryable,
  schemas: string[],
  tables: Array<Pick<DbTable, 'schema' | 'name' | 'columns' | 'checks' | 'exclusions' | 'partitions'>>,
): Promise<Pick<DbSnapshot, 'enums' | 'composites' | 'domains' | 'extensions' | 'unbuilt' | 'searchPath'>> {
  const enums = await describeEnums(db, schemas);
  const composites = await describeComposites(db, schemas, tables);
  const domains = await describeDomains(db, schemas, tables);
  const extensions = await describeExtensions(db);
  // What the tables and domains describe (checks, exclusions, partitions as data) is built, so not named.
  const described = new Set([
    ...tables.flatMap((t) => [
      ...(t.checks ?? []).map((c) => JSON.stringify(['check', t.schema, c.name, t.name])),
      ...(t.exclusions ?? []).map((x) => JSON.stringify(['exclusion constraint', t.schema, x.name, t.name])),
      ...(t.partitions ?? []).flatMap((p) => [
        JSON.stringify(['partition', p.schema, p.name, p.of.name]),
        ...(p.checks ?? []).map((c) => JSON.stringify(['check', p.schema, c.name, p.name])),
      ]),
    ]),
    ...domains.flatMap((d) => (d.checks ?? []).map((c) => JSON.stringify(['check', d.schema, c.name, d.name]))),
  ]);
  const unbuilt = [
    ...(await describeUnbuilt(db, schemas)).filter(
      (u) => !described.has(JSON.stringify([u.kind, u.schema, u.name, u.table])),
    ),
    ...(await undescribedDefaults(db, tables)),
  ];
  // The path a new connection starts with (the database's or role's setting, `$user` resolved):
  // in the description when not `public` alone, so older recordings and plain worlds stay as they were.
  const path = (await db.query('SELECT current_schemas(false)::text[] AS path')).rows[0] as
    | { path?: unknown }
    | undefined;
  const searchPath = Array.isArray(path?.path) ? path.path.map(String) : ['public'];
  return {
    ...(searchPath.length === 1 && searchPath[0] === 'public' ? {} : { searchPath }),
    ...(enums.length > 0 ? { enums } : {}),
    ...(composites.length > 0 ? { composites } : {}),
    ...(domains.length > 0 ? { domains } : {}),
    ...(extensions.length > 0 ? { extensions } : {}),
    ...(unbuilt.length > 0 ? { unbuilt } : {}),
  };
}
