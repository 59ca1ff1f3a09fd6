// The DDL that builds a snapshot's schema description in a sandbox (rows aside): composed from the
// description's parts — quoted names, allow-listed types, defaults and extensions — never taken
// from recorded SQL text. seed.ts runs it and lays the rows in; renderDdl shows it (db.json's ddl).
import type { DbSequence, DbSnapshot, DbTable } from '../recording/index.js';
import { partitionBySql, partitionStatements, ruleStatements } from './ddl-rules.js';
import { missingExtensionReason, wantedExtensions } from './extensions.js';
import {
  castsKept,
  DEFAULT_FUNCTION_EXTENSION,
  defaultSql,
  generatedSql,
  namedType,
  quoteIdent,
  quoteLiteral,
  regclass,
  sqlType,
  tableRef,
} from './sql.js';

export type Description = Pick<
  DbSnapshot,
  'schemas' | 'tables' | 'sequences' | 'enums' | 'composites' | 'domains' | 'extensions'
>;

export interface Statement {
  sql: string;
  /** What it builds, for an error message. */
  what: string;
  /**
   * A rule the rows are held to (a check, an exclusion): built in a savepoint, and a sandbox that
   * cannot build it says so in its lacks instead of failing.
   */
  optional?: true;
}

export interface Plan {
  schemas: Statement[];
  sequences: Statement[];
  tables: Statement[];
  /** After the rows: foreign keys, indexes, sequence ownership and positions. */
  after: Statement[];
  /** What the sandbox lacks of the description for want of an extension, one line each. */
  lacks: string[];
}

export const key = (schema: string, name: string) => JSON.stringify([schema, name]);

function hasKey(table: Pick<DbTable, 'primaryKey' | 'unique'>, columns: string[]): boolean {
  const same = (list: string[]) => list.length === columns.length && list.every((c) => columns.includes(c));
  return same(table.primaryKey) || (table.unique ?? []).some((u) => same(u.columns));
}

/**
 * The statements that build `description` (rows aside), in the order they run. `extensions`: those
 * the sandbox holds (createExtensions); by default every one a sandbox may create.
 */
/** The recorded sequence of an identity column (none in a snapshot that did not record it). */
export function identitySequence(
  description: Pick<Description, 'sequences'> | undefined,
  t: Pick<DbTable, 'schema' | 'name'>,
  column: string,
): DbSequence | undefined {
  return description?.sequences?.find(
    (s) => s.identity && s.schema === t.schema && s.ownedBy?.table === t.name && s.ownedBy.column === column,
  );
}

export function plan(description: Description, extensions?: ReadonlySet<string>): Plan {
  const out: Plan = { schemas: [], sequences: [], tables: [], after: [], lacks: [] };
  const held = extensions ?? new Set(wantedExtensions(description).map((e) => e.name));
  const extensionSchema = new Map((description.extensions ?? []).map((e) => [e.name, e.schema]));
  const lacking = new Map<string, string[]>();
  const lack = (extension: string, what: string) => lacking.set(extension, [...(lacking.get(extension) ?? []), what]);
  for (const e of description.extensions ?? []) if (!held.has(e.name)) lacking.set(e.name, []);
  const sequences = new Map((description.sequences ?? []).map((s) => [key(s.schema, s.name), s]));
  const tables = new Map(description.tables.map((t) => [key(t.schema, t.name), t]));
  for (const schema of description.schemas) {
    out.schemas.push({ sql: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`, what: `schema ${schema}` });
  }
  const enums = new Set<string>();
  for (const e of description.enums ?? []) {
    enums.add(key(e.schema, e.name));
    out.schemas.push({
      sql: `CREATE TYPE ${tableRef(e.schema, e.name)} AS ENUM (${e.labels.map(quoteLiteral).join(', ')})`,
      what: `enum type ${e.schema}.${e.name}`,
    });
  }
  const domains = new Set((description.domains ?? []).map((d) => key(d.schema, d.name)));
  /** The composite types built: each of whose attributes is a built-in type or one built before it. */
  const composites = new Set<string>();
  // A column of a described enum, composite or domain (or an array of one) has that type, as has one
  // of an extension's type when the sandbox holds the extension; else sqlType's allow-list (text for the rest).
  const typeOf = (c: Pick<DbTable['columns'][number], 'type' | 'enum' | 'udt'>, what: string): string => {
    const named = c.enum ?? c.udt;
    const k = named && key(named.schema, named.name);
    if (k !== undefined && named !== undefined && (enums.has(k) || domains.has(k) || composites.has(k)))
      return namedType(named, c.type.replace(/\(\d+\)/g, ''));
    if (c.udt?.extension !== undefined) {
      if (held.has(c.udt.extension)) return namedType(c.udt, c.type);
      lack(c.udt.extension, `${what} holds its values as text`);
    } else if (c.udt !== undefined) {
      // A type of the database's own the description does not hold (a composite type): named, not silent.
      const type = `type ${c.udt.schema}.${c.udt.name}`;
      otherTypes.set(type, [...(otherTypes.get(type) ?? []), what]);
    }
    return sqlType(c.type);
  };
  const otherTypes = new Map<string, string[]>();
  // The missing extension whose type a column (or its domain) would have had: it holds text instead.
  const domainOf = new Map((description.domains ?? []).map((d) => [key(d.schema, d.name), d]));
  const missingType = (c: Pick<DbTable['columns'][number], 'udt'>, depth = 0): string | undefined => {
    if (c.udt === undefined || depth > 32) return undefined;
    if (c.udt.extension !== undefined) return held.has(c.udt.extension) ? undefined : c.udt.extension;
    const domain = domainOf.get(key(c.udt.schema, c.udt.name));
    return domain ? missingType(domain, depth + 1) : undefined;
  };
  // Composite types after the enums (an attribute may be one), each after those it holds; one with
  // an attribute of a domain or of a type not described is not built (its columns hold text).
  for (const c of description.composites ?? []) {
    const builds = c.attributes.every((a) => {
      if (a.udt === undefined) return true;
      const k = key(a.udt.schema, a.udt.name);
      return enums.has(k) || composites.has(k) || (a.udt.extension !== undefined && held.has(a.udt.extension));
    });
    if (!builds) continue;
    if (!out.schemas.some((s) => s.what === `schema ${c.schema}`))
      out.schemas.push({ sql: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(c.schema)}`, what: `schema ${c.schema}` });
    const attributes = c.attributes.map(
      (a) =>
        `${quoteIdent(a.name)} ${a.udt === undefined ? sqlType(a.type) : namedType(a.udt, a.udt.extension === undefined ? a.type.replace(/\(\d+\)/g, '') : a.type)}`,
    );
    out.schemas.push({
      sql: `CREATE TYPE ${tableRef(c.schema, c.name)} AS (${attributes.join(', ')})`,
      what: `composite type ${c.schema}.${c.name}`,
    });
    composites.add(key(c.schema, c.name));
  }
  for (const d of description.domains ?? []) {
    if (!out.schemas.some((s) => s.what === `schema ${d.schema}`))
      out.schemas.push({ sql: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(d.schema)}`, what: `schema ${d.schema}` });
    out.schemas.push({
      sql: `CREATE DOMAIN ${tableRef(d.schema, d.name)} AS ${typeOf(d, `domain ${d.schema}.${d.name}`)}${d.nullable ? '' : ' NOT NULL'}`,
      what: `domain ${d.schema}.${d.name}`,
    });
    // Its CHECKs after the rows, NOT VALID as a table's are (VALUE is the column `value`).
    for (const c of d.checks ?? [])
      if (castsKept(c.expression))
        out.after.push({
          sql: `ALTER DOMAIN ${tableRef(d.schema, d.name)} ADD CONSTRAINT ${quoteIdent(c.name)} CHECK (${generatedSql(c.expression)}) NOT VALID`,
          what: `check ${c.name} of domain ${d.schema}.${d.name}`,
        });
  }
  const options = (s: DbSequence) =>
    `INCREMENT BY ${s.increment} MINVALUE ${s.min} MAXVALUE ${s.max} START WITH ${s.start}${s.cycle ? ' CYCLE' : ' NO CYCLE'}`;
  for (const s of sequences.values()) {
    if (s.identity) continue; // made by its table
    out.sequences.push({
      sql: `CREATE SEQUENCE ${tableRef(s.schema, s.name)} AS ${s.type} ${options(s)}`,
      what: `sequence ${s.schema}.${s.name}`,
    });
  }
  for (const t of description.tables) {
    const parts = t.columns.map((c) => {
      let col = `${quoteIdent(c.name)} ${typeOf(c, `column ${t.schema}.${t.name}.${c.name}`)}`;
      // A generated column whose expression is not described is a plain one: no NOT NULL, which
      // rows the agent inserts could not meet.
      if (c.generated === null || (c.generated !== undefined && !castsKept(c.generated))) return col;
      if (c.generated !== undefined) col += ` GENERATED ALWAYS AS (${generatedSql(c.generated)}) STORED`;
      else if (c.identity) {
        // Its sequence's name, start, step and bounds as recorded (the defaults would hand out other ids).
        const s = identitySequence(description, t, c.name);
        const own = s === undefined ? '' : ` (SEQUENCE NAME ${tableRef(s.schema, s.name)} ${options(s)})`;
        col += ` GENERATED ${c.identity === 'always' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY${own}`;
      } else if (c.default && (c.default.kind !== 'sequence' || sequences.has(key(c.default.schema, c.default.name)))) {
        const extension = c.default.kind === 'function' ? DEFAULT_FUNCTION_EXTENSION[c.default.name] : undefined;
        if (extension === undefined) col += ` DEFAULT ${defaultSql(c.default)}`;
        else if (held.has(extension)) col += ` DEFAULT ${defaultSql(c.default, extensionSchema.get(extension))}`;
        else lack(extension, `column ${t.schema}.${t.name}.${c.name} has no default`);
      }
      if (!c.nullable) col += ' NOT NULL';
      return col;
    });
    const deferrable = (d: 'deferred' | 'immediate' | undefined) =>
      d === undefined ? '' : ` DEFERRABLE INITIALLY ${d.toUpperCase()}`;
    if (t.primaryKey.length > 0)
      parts.push(`PRIMARY KEY (${t.primaryKey.map(quoteIdent).join(', ')})${deferrable(t.primaryKeyDeferrable)}`);
    for (const u of t.unique ?? [])
      parts.push(
        `CONSTRAINT ${quoteIdent(u.name)} UNIQUE (${u.columns.map(quoteIdent).join(', ')})${deferrable(u.deferrable)}`,
      );
    const inherits =
      t.inherits?.filter((p) => tables.has(key(p.schema, p.name))).map((p) => tableRef(p.schema, p.name)) ?? [];
    out.tables.push({
      sql: `CREATE TABLE ${tableRef(t.schema, t.name)} (${parts.join(', ')})${inherits.length > 0 ? ` INHERITS (${inherits.join(', ')})` : ''}${partitionBySql(t.partitionBy)}`,
      what: `table ${t.schema}.${t.name}`,
    });
    out.tables.push(...partitionStatements(t, description.schemas));
    out.after.push(...ruleStatements(t, held, lack));
    // A partition's own checks (one added to it alone, not its parent), on the partition.
    for (const p of t.partitions ?? []) out.after.push(...ruleStatements({ ...p, exclusions: [] }, held, lack));
    for (const fk of t.foreignKeys ?? []) {
      const target = tables.get(key(fk.references.schema, fk.references.table));
      // A key to a table outside the snapshot, or to columns that are no key there, cannot be built.
      if (!target || !hasKey(target, fk.references.columns)) continue;
      const actions = `${fk.onDelete ? ` ON DELETE ${fk.onDelete.toUpperCase()}` : ''}${fk.onUpdate ? ` ON UPDATE ${fk.onUpdate.toUpperCase()}` : ''}${fk.deferrable ? ` DEFERRABLE INITIALLY ${fk.deferrable.toUpperCase()}` : ''}`;
      out.after.push({
        // NOT VALID: rows a snapshot read table by table need not agree; new rows are checked. A
        // partitioned table's key cannot be NOT VALID (before Postgres 18): it checks the rows.
        sql: `ALTER TABLE ${tableRef(t.schema, t.name)} ADD CONSTRAINT ${quoteIdent(fk.name)} FOREIGN KEY (${fk.columns.map(quoteIdent).join(', ')}) REFERENCES ${tableRef(fk.references.schema, fk.references.table)} (${fk.references.columns.map(quoteIdent).join(', ')})${actions}${t.partitionBy ? '' : ' NOT VALID'}`,
        what: `foreign key ${fk.name} of ${t.schema}.${t.name}`,
        ...(t.partitionBy ? { optional: true as const } : {}),
      });
    }
    // Those its partitions have of their own (on the same columns), then its own: the names its
    // indexes' copies on the partitions are given then keep clear of the recorded ones.
    const indexed = [
      ...(t.partitions ?? []).flatMap((p) => (p.indexes ?? []).map((index) => ({ on: p, index }))),
      ...(t.indexes ?? []).map((index) => ({ on: { schema: t.schema, name: t.name }, index })),
    ];
    for (const { on, index } of indexed) {
      // An operator class of Postgres's own or of an extension the sandbox holds; another one (a
      // user's, or a missing extension's) leaves the index out.
      const opclasses = index.opclasses ?? [];
      const missing = opclasses.find(
        (o) => o !== null && (o.extension === undefined ? o.schema !== 'pg_catalog' : !held.has(o.extension)),
      );
      if (missing) {
        if (missing.extension !== undefined) lack(missing.extension, `index ${on.schema}.${index.name} is left out`);
        else out.lacks.push(`index ${on.schema}.${index.name} (operator class ${missing.schema}.${missing.name})`);
        continue;
      }
      // On a column held as text, only a btree or hash index has text's default operator class.
      const asText = index.columns
        .map((name) => t.columns.find((c) => c.name === name))
        .map((c) => (c ? missingType(c) : undefined))
        .find((e) => e !== undefined);
      if (asText !== undefined && index.method !== 'btree' && index.method !== 'hash') {
        lack(asText, `index ${on.schema}.${index.name} is left out`);
        continue;
      }
      const columns = index.columns.map((c, i) => {
        const o = opclasses[i];
        return `${quoteIdent(c)}${o ? ` ${tableRef(o.schema, o.name)}` : ''}`;
      });
      const options = Object.entries(index.options ?? {}).map(([k, v]) => `${k} = ${Number(v)}`);
      out.after.push({
        sql: `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quoteIdent(index.name)} ON ${tableRef(on.schema, on.name)} USING ${index.method} (${columns.join(', ')})${options.length > 0 ? ` WITH (${options.join(', ')})` : ''}`,
        what: `index ${index.name} of ${on.schema}.${on.name}`,
      });
    }
  }
  for (const s of sequences.values()) {
    const owner = s.ownedBy && tables.get(key(s.schema, s.ownedBy.table));
    const ownerOk = owner?.columns.some((c) => c.name === s.ownedBy?.column);
    const target =
      s.identity && owner && ownerOk
        ? `pg_get_serial_sequence(${quoteLiteral(tableRef(s.schema, s.ownedBy?.table ?? ''))}, ${quoteLiteral(s.ownedBy?.column ?? '')})`
        : s.identity
          ? undefined
          : regclass(s.schema, s.name);
    if (target === undefined) continue;
    if (!s.identity && owner && ownerOk && s.ownedBy) {
      out.after.push({
        sql: `ALTER SEQUENCE ${tableRef(s.schema, s.name)} OWNED BY ${tableRef(s.schema, s.ownedBy.table)}.${quoteIdent(s.ownedBy.column)}`,
        what: `owner of sequence ${s.schema}.${s.name}`,
      });
    }
    // The position the recorded run saw: the next id handed out is the one it got.
    out.after.push({
      sql: `SELECT setval(${target}, ${s.last}, ${s.called ? 'true' : 'false'})`,
      what: `position of sequence ${s.schema}.${s.name}`,
    });
  }
  // Identity columns of a snapshot that did not record their sequence: just past the highest id.
  for (const t of description.tables) {
    for (const c of t.columns) {
      if (!c.identity) continue;
      if (identitySequence(description, t, c.name) !== undefined) continue;
      out.after.push({
        sql: `SELECT setval(pg_get_serial_sequence(${quoteLiteral(tableRef(t.schema, t.name))}, ${quoteLiteral(c.name)}), max(${quoteIdent(c.name)})) FROM ${tableRef(t.schema, t.name)} HAVING max(${quoteIdent(c.name)}) IS NOT NULL`,
        what: `position of the identity of ${t.schema}.${t.name}.${c.name}`,
      });
    }
  }
  for (const [type, what] of otherTypes)
    out.lacks.push(
      `${type} (not one a sandbox builds: composite and other user types): ${what.join(', ')} holds its values as text`,
    );
  for (const [extension, what] of lacking) {
    out.lacks.push(
      `extension ${extension} (${extensionSchema.has(extension) ? missingExtensionReason(extension) : "not among the recorded database's extensions"})${what.length > 0 ? `: ${what.join(', ')}` : ''}`,
    );
  }
  return out;
}

/**
 * The description as readable SQL (db.json's `ddl`): what a sandbox runs, minus the rows and the
 * sequence positions (those are data, and change during a run). Never executed from a recording.
 */
export function renderDdl(description: Description): string[] {
  const p = plan(description);
  const extensions = wantedExtensions(description).map((e) => ({
    sql: `CREATE EXTENSION IF NOT EXISTS ${quoteIdent(e.name)} WITH SCHEMA ${quoteIdent(e.schema)}`,
    what: `extension ${e.name}`,
  }));
  return [...extensions, ...p.schemas, ...p.sequences, ...p.tables, ...p.after]
    .filter((s) => !s.what.startsWith('position of'))
    .map((s) => s.sql);
}
