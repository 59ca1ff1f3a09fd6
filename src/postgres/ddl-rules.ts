// The DDL of what a table holds its rows to beyond keys, composed from the description's data
// (ddl.ts's plan takes it): PARTITION BY and its partitions with their bounds, CHECK constraints
// (generatedSql renders the expression), EXCLUDE constraints. Nothing is taken from recorded SQL text.
import type { DbTable } from '../recording/index.js';
import type { Statement } from './ddl.js';
import { castsKept, generatedSql, quoteIdent, quoteLiteral, tableRef } from './sql.js';

type Bound = NonNullable<DbTable['partitions']>[number]['bound'];
type BoundValue = Extract<Bound, { kind: 'range' }>['from'][number];

/** ` PARTITION BY RANGE ("at")`, or nothing for a plain table. */
export function partitionBySql(by: DbTable['partitionBy']): string {
  return by ? ` PARTITION BY ${by.strategy.toUpperCase()} (${by.columns.map(quoteIdent).join(', ')})` : '';
}

function boundValue(v: BoundValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'object') return v.bound.toUpperCase();
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  // A number as a constant Postgres reads as the key's type (a quoted one is of unknown type, too).
  return quoteLiteral(String(v));
}

function boundSql(b: Bound): string {
  switch (b.kind) {
    case 'default':
      return 'DEFAULT';
    case 'list':
      return `FOR VALUES IN (${b.values.map(boundValue).join(', ')})`;
    case 'range':
      return `FOR VALUES FROM (${b.from.map(boundValue).join(', ')}) TO (${b.to.map(boundValue).join(', ')})`;
    case 'hash':
      return `FOR VALUES WITH (MODULUS ${Math.trunc(b.modulus)}, REMAINDER ${Math.trunc(b.remainder)})`;
  }
}

/** The partitions of `t`, each after the one it is a partition of (the description's order). */
export function partitionStatements(t: Pick<DbTable, 'partitions'>, schemas: string[]): Statement[] {
  const out: Statement[] = [];
  for (const p of t.partitions ?? []) {
    if (!schemas.includes(p.schema))
      out.push({ sql: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(p.schema)}`, what: `schema ${p.schema}` });
    out.push({
      sql: `CREATE TABLE ${tableRef(p.schema, p.name)} PARTITION OF ${tableRef(p.of.schema, p.of.name)} ${boundSql(p.bound)}${partitionBySql(p.partitionBy)}`,
      what: `partition ${p.schema}.${p.name} of ${p.of.schema}.${p.of.name}`,
    });
  }
  return out;
}

/**
 * The CHECK and EXCLUDE constraints of `t`, built after its rows: a check NOT VALID (the recorded
 * rows met it; the agent's are checked), an exclusion over the rows. An exclusion whose operator
 * class is of an extension the sandbox lacks is left out, said through `lack`.
 */
export function ruleStatements(
  t: Pick<DbTable, 'schema' | 'name' | 'checks' | 'exclusions'>,
  held: ReadonlySet<string>,
  lack: (extension: string, what: string) => void,
): Statement[] {
  const out: Statement[] = [];
  const table = tableRef(t.schema, t.name);
  for (const c of t.checks ?? []) {
    // A cast sqlType would render as text (`::citext`) would check something else: not built.
    if (!castsKept(c.expression)) continue;
    out.push({
      sql: `ALTER TABLE ${table} ADD CONSTRAINT ${quoteIdent(c.name)} CHECK (${generatedSql(c.expression)})${c.noInherit ? ' NO INHERIT' : ''} NOT VALID`,
      what: `check ${c.name} of ${t.schema}.${t.name}`,
      optional: true,
    });
  }
  for (const x of t.exclusions ?? []) {
    const missing = x.elements.find((e) => e.opclass?.extension !== undefined && !held.has(e.opclass.extension));
    if (missing?.opclass?.extension !== undefined) {
      lack(missing.opclass.extension, `exclusion constraint ${x.name} of ${t.schema}.${t.name} is left out`);
      continue;
    }
    const elements = x.elements.map(
      (e) =>
        `${quoteIdent(e.column)}${e.opclass ? ` ${tableRef(e.opclass.schema, e.opclass.name)}` : ''} WITH ${e.operator}`,
    );
    out.push({
      sql: `ALTER TABLE ${table} ADD CONSTRAINT ${quoteIdent(x.name)} EXCLUDE USING ${x.method} (${elements.join(', ')})${x.deferrable ? ` DEFERRABLE INITIALLY ${x.deferrable.toUpperCase()}` : ''}`,
      what: `exclusion constraint ${x.name} of ${t.schema}.${t.name}`,
      optional: true,
    });
  }
  return out;
}
