// SQL text tapedeck builds itself: quoting, the allow-list of column types and defaults a sandbox
// recreates, and database URLs (with their password kept out of every message and file).
import type { ColumnDefault, GeneratedExpr } from '../recording/index.js';

/** What seeding, snapshots and capture need of a connection: pg.Client, pg.Pool and PGlite all fit. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** A string constant; an E'' literal when it holds a backslash, so it reads the same whatever standard_conforming_strings is. */
export function quoteLiteral(text: string): string {
  const body = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${body.replaceAll('\\', '\\\\')}'` : `'${body}'`;
}

/**
 * The snapshot form of a timestamptz expression: UTC ISO with microseconds, and `infinity` /
 * `-infinity` as Postgres writes them (to_char has no text for those: it gives NULL).
 */
export const utcTimestampSql = (expr: string): string =>
  `CASE WHEN isfinite(${expr}) THEN to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') ELSE (${expr})::text END`;

export const tableRef = (schema: string, table: string): string => `${quoteIdent(schema)}.${quoteIdent(table)}`;

/** The name of a relation as a regclass literal: 'schema.name' with both parts quoted. */
export const regclass = (schema: string, name: string): string => `${quoteLiteral(tableRef(schema, name))}::regclass`;

/**
 * The condition that a row of `alias` is the table's own: not an inheritance child's (each child is
 * a table of the snapshot), but a partition's of a partitioned table (partitions are not).
 */
export const ownRowSql = (alias: string, schema: string, table: string): string =>
  `(${alias}.tableoid = ${regclass(schema, table)} OR ${alias}.tableoid IN (SELECT relid FROM pg_partition_tree(${regclass(schema, table)})))`;

const ALIASES: Record<string, string> = {
  int: 'integer',
  int4: 'integer',
  int8: 'bigint',
  int2: 'smallint',
  serial: 'integer',
  serial4: 'integer',
  bigserial: 'bigint',
  serial8: 'bigint',
  smallserial: 'smallint',
  serial2: 'smallint',
  float8: 'double precision',
  float4: 'real',
  float: 'double precision',
  bool: 'boolean',
  varchar: 'character varying',
  char: 'character',
  bpchar: 'character',
  timestamptz: 'timestamp with time zone',
  timetz: 'time with time zone',
  decimal: 'numeric',
  varbit: 'bit varying',
};

const BASE_TYPES = new Set([
  'smallint',
  'integer',
  'bigint',
  'numeric',
  'real',
  'double precision',
  'boolean',
  'text',
  'character varying',
  'character',
  'bytea',
  'date',
  'time',
  'timestamp',
  'interval',
  'uuid',
  'json',
  'jsonb',
  'inet',
  'cidr',
  'macaddr',
  'macaddr8',
  'money',
  'bit',
  'bit varying',
  'xml',
  'tsvector',
  'tsquery',
  'point',
  'line',
  'lseg',
  'box',
  'path',
  'polygon',
  'circle',
  'int4range',
  'int8range',
  'numrange',
  'tsrange',
  'tstzrange',
  'daterange',
  'int4multirange',
  'int8multirange',
  'nummultirange',
  'tsmultirange',
  'tstzmultirange',
  'datemultirange',
  'oid',
]);
/** Types whose modifier (length, precision) is kept. */
const WITH_MODIFIER = new Set(['numeric', 'character varying', 'character', 'bit', 'bit varying', 'time', 'timestamp']);
const TYPE =
  /^([a-z][a-z0-9 ]*?)\s*(?:\(\s*(\d{1,4})\s*(?:,\s*(-?\d{1,4})\s*)?\))?(\s+with(?:out)?\s+time\s+zone)?\s*((?:\[\d*\]\s*)*)$/;

/**
 * The SQL type a sandbox gives a recorded column: the recorded type when it is a built-in one
 * (format_type's spelling or a common alias, with its modifier and array dimensions), else text.
 * Nothing of the recorded string reaches SQL unless it matched the allow-list.
 */
export function sqlType(recorded: string): string {
  const m = TYPE.exec(recorded.trim().toLowerCase().replace(/\s+/g, ' '));
  if (!m) return 'text';
  const [, rawBase = '', p1, p2, zone, arrays = ''] = m;
  let base = ALIASES[rawBase] ?? rawBase;
  let withZone = zone?.trim();
  if (base === 'timestamp with time zone' || base === 'time with time zone') {
    withZone = 'with time zone';
    base = base.replace(' with time zone', '');
  }
  if (!BASE_TYPES.has(base)) return 'text';
  if (withZone !== undefined && base !== 'time' && base !== 'timestamp') return 'text';
  let out = base;
  if (p1 !== undefined && WITH_MODIFIER.has(base)) out += p2 === undefined ? `(${p1})` : `(${p1},${p2})`;
  if (withZone !== undefined) out += ` ${withZone}`;
  const dims = (arrays.match(/\[/g) ?? []).length;
  return out + '[]'.repeat(Math.min(dims, 6));
}

/**
 * A type of an extension or a domain, by its quoted name, with the recorded type's one numeric
 * modifier (`vector(3)`) and array dimensions, read from format_type's text: nothing else of it.
 */
export function namedType(ref: { schema: string; name: string }, recorded: string): string {
  const modifier = /^[^[]*?\((\d{1,6})\)\s*(?:\[|$)/.exec(recorded.trim());
  const dims = Math.min((recorded.match(/\[\d*\]/g) ?? []).length, 6);
  return `${tableRef(ref.schema, ref.name)}${modifier ? `(${modifier[1]})` : ''}${'[]'.repeat(dims)}`;
}

const FUNCTION_SQL: Record<Extract<ColumnDefault, { kind: 'function' }>['name'], string> = {
  now: 'now()',
  current_timestamp: 'CURRENT_TIMESTAMP',
  current_date: 'CURRENT_DATE',
  current_time: 'CURRENT_TIME',
  localtimestamp: 'LOCALTIMESTAMP',
  clock_timestamp: 'clock_timestamp()',
  statement_timestamp: 'statement_timestamp()',
  transaction_timestamp: 'transaction_timestamp()',
  gen_random_uuid: 'gen_random_uuid()',
  random: 'random()',
  uuid_generate_v1: 'uuid_generate_v1()',
  uuid_generate_v1mc: 'uuid_generate_v1mc()',
  uuid_generate_v4: 'uuid_generate_v4()',
};

/** The extension a default function belongs to (the others are built in). */
export const DEFAULT_FUNCTION_EXTENSION: Partial<Record<Extract<ColumnDefault, { kind: 'function' }>['name'], string>> =
  {
    uuid_generate_v1: 'uuid-ossp',
    uuid_generate_v1mc: 'uuid-ossp',
    uuid_generate_v4: 'uuid-ossp',
  };

/**
 * The SQL of a column default from its description (a constant is left for Postgres to convert to
 * the column's type). `schema`: where an extension's function lives (qualified, so no search_path decides).
 */
export function defaultSql(d: ColumnDefault, schema?: string): string {
  switch (d.kind) {
    case 'sequence':
      return `nextval(${regclass(d.schema, d.name)})`;
    case 'function': {
      const call = schema === undefined ? FUNCTION_SQL[d.name] : `${quoteIdent(schema)}.${FUNCTION_SQL[d.name]}`;
      if (d.plus !== undefined) return `(${call} + ${quoteLiteral(d.plus)}::interval)`;
      if (d.minus !== undefined) return `(${call} - ${quoteLiteral(d.minus)}::interval)`;
      return call;
    }
    case 'value':
      if (d.value === null) return 'NULL';
      if (typeof d.value === 'boolean') return d.value ? 'true' : 'false';
      if (typeof d.value === 'number') return Number.isFinite(d.value) ? quoteLiteral(String(d.value)) : 'NULL';
      return quoteLiteral(d.value);
  }
}

/**
 * The SQL of an expression as data (a generated column's, a CHECK's) from its description: every part quoted or taken
 * from an allow-list (the schema's operators and functions, sqlType's types), fully parenthesised.
 * @example generatedSql({ op: '*', args: [{ column: 'qty' }, { column: 'price' }] }) // ("qty" * "price")
 */
export function generatedSql(e: GeneratedExpr): string {
  if ('column' in e) return quoteIdent(e.column);
  if ('value' in e) {
    // Numbers bare (a quoted one is of unknown type, which `'2' * '3'` cannot resolve).
    if (typeof e.value === 'number') return Number.isFinite(e.value) ? `(${String(e.value)})` : 'NULL';
    return defaultSql({ kind: 'value', value: e.value });
  }
  if ('cast' in e) return `(${generatedSql(e.arg)})::${sqlType(e.cast)}`;
  if ('call' in e) return `${e.call}(${e.args.map(generatedSql).join(', ')})`;
  if ('array' in e) return `ARRAY[${e.array.map(generatedSql).join(', ')}]`;
  const [a, b] = e.args.map(generatedSql);
  if (e.op === 'is null' || e.op === 'is not null') return `(${a} ${e.op.toUpperCase()})`;
  if (b === undefined) return e.op === 'not' ? `(NOT ${a})` : `(${e.op}${a})`;
  const op = e.op === 'and' || e.op === 'or' ? e.op.toUpperCase() : e.op;
  return e.quantified === undefined ? `(${a} ${op} ${b})` : `(${a} ${op} ${e.quantified.toUpperCase()} (${b}))`;
}

/**
 * Whether every cast in an expression keeps its type in a sandbox: sqlType renders a type outside
 * its allow-list as text, and `x::citext <> 'NO'` compared as text is another rule (silently).
 */
export function castsKept(e: GeneratedExpr): boolean {
  if ('column' in e || 'value' in e) return true;
  if ('cast' in e) return (sqlType(e.cast) !== 'text' || e.cast.trim().toLowerCase() === 'text') && castsKept(e.arg);
  if ('call' in e) return e.args.every(castsKept);
  if ('array' in e) return e.array.every(castsKept);
  return e.args.every(castsKept);
}

/**
 * A database URL fit for a message, a manifest or a file: the password is never kept. Anything
 * that does not parse as a URL is not echoed at all (it may be a password pasted in the wrong place).
 */
export function redactDbUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    for (const name of [...u.searchParams.keys()]) {
      if (/pass|secret|key|token/i.test(name)) u.searchParams.set(name, '***');
    }
    return u.toString();
  } catch {
    return '(a value that is not a URL)';
  }
}

/** Whether `url` is a postgres:// (or postgresql://) URL. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url) && URL.canParse(url);
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}
