// The schema description of a database snapshot read out of SQL text, never by running it: the
// `ddl` of recordings made before db.json carried the description (migrated on read). The catalog's
// printed defaults, expressions and partition bounds are read by catalog-expr.ts. Only an
// allow-listed grammar is understood; anything else is left out of the description and reported.
import { defaultOf } from './catalog-expr.js';
import { Cursor, isKw, isP, tokenize } from './sql-cursor.js';
import type { ColumnDefault, DbSequence, DbSnapshot, DbTable } from './types.js';

export { parseColumnDefault, parseGeneratedExpression, parsePartitionBound } from './catalog-expr.js';

interface TableExtras {
  defaults: Map<string, ColumnDefault | { kind: 'sequence-name'; schema?: string; name: string }>;
  identity: Map<string, 'always' | 'by default'>;
  unique: NonNullable<DbTable['unique']>;
  foreignKeys: NonNullable<DbTable['foreignKeys']>;
  indexes: NonNullable<DbTable['indexes']>;
}

const FK_ACTIONS = ['no action', 'restrict', 'cascade', 'set null', 'set default'] as const;
type FkAction = (typeof FK_ACTIONS)[number];

function fkAction(c: Cursor): FkAction | undefined {
  for (const action of FK_ACTIONS) if (c.kw(...action.split(' '))) return action;
  return undefined;
}

/** FOREIGN KEY (a) REFERENCES s.t(b) [ON DELETE x] [ON UPDATE y] … */
function foreignKey(c: Cursor, name: string): TableExtras['foreignKeys'][number] | undefined {
  const columns = c.identList();
  if (!columns || !c.kw('references')) return undefined;
  const ref = c.qname();
  const refColumns = c.identList();
  if (!ref || !refColumns || refColumns.length !== columns.length) return undefined;
  const fk: TableExtras['foreignKeys'][number] = {
    name,
    columns,
    // An unqualified name was visible on the recorder's search path: public.
    references: { schema: ref.schema ?? 'public', table: ref.name, columns: refColumns },
  };
  for (;;) {
    if (c.kw('on', 'delete')) {
      const action = fkAction(c);
      if (!action) return undefined;
      fk.onDelete = action;
    } else if (c.kw('on', 'update')) {
      const action = fkAction(c);
      if (!action) return undefined;
      fk.onUpdate = action;
    } else break;
  }
  // MATCH …, DEFERRABLE, NOT VALID: not part of the description.
  c.until(() => false);
  return fk;
}

/** One table constraint after CONSTRAINT name (or none): true when understood or safely skipped. */
function tableConstraint(c: Cursor, name: string, extras: TableExtras): boolean {
  if (c.kw('primary', 'key')) return c.identList() !== undefined;
  if (c.kw('unique')) {
    const columns = c.identList();
    if (!columns) return false;
    extras.unique.push({ name, columns });
    return true;
  }
  if (c.kw('foreign', 'key')) {
    const fk = foreignKey(c, name);
    if (!fk) return false;
    extras.foreignKeys.push(fk);
    return true;
  }
  if (c.kw('check')) {
    // Check expressions are not part of the description (they would have to be run).
    c.until((tok) => isP(tok, ','));
    return true;
  }
  return false;
}

function createTable(c: Cursor, extras: (schema: string, name: string) => TableExtras): boolean {
  c.kw('if', 'not', 'exists');
  const q = c.qname();
  if (!q || !c.p('(')) return false;
  const schema = q.schema ?? 'public';
  const table = extras(schema, q.name);
  for (;;) {
    if (c.kw('constraint')) {
      const name = c.ident();
      if (name === undefined || !tableConstraint(c, name, table)) return false;
    } else if (
      isKw(c.peek(), 'primary') ||
      isKw(c.peek(), 'unique') ||
      isKw(c.peek(), 'foreign') ||
      isKw(c.peek(), 'check')
    ) {
      if (!tableConstraint(c, `${q.name}_constraint`, table)) return false;
    } else {
      const column = c.ident();
      if (column === undefined) return false;
      const rest = c.until((tok) => isP(tok, ','));
      const def = new Cursor(rest);
      while (!def.done) {
        if (def.kw('generated', 'always', 'as', 'identity')) table.identity.set(column, 'always');
        else if (def.kw('generated', 'by', 'default', 'as', 'identity')) table.identity.set(column, 'by default');
        else if (def.kw('default')) {
          const expr = def.until(
            (tok) => isKw(tok, 'not') || isKw(tok, 'null') || isKw(tok, 'generated') || isKw(tok, 'constraint'),
          );
          // `DEFAULT NULL` is the constant null: the stop words above would cut it to nothing.
          const parsed =
            expr.length === 0 && def.kw('null') ? { kind: 'value' as const, value: null } : defaultOf(expr);
          if (parsed) table.defaults.set(column, parsed);
        } else def.i++;
      }
    }
    if (c.p(')')) return c.done;
    if (!c.p(',')) return false;
  }
}

function alterTable(c: Cursor, extras: (schema: string, name: string) => TableExtras): boolean {
  c.kw('only');
  const q = c.qname();
  if (!q || !c.kw('add', 'constraint')) return false;
  const name = c.ident();
  if (name === undefined) return false;
  const schema = q.schema ?? 'public';
  return tableConstraint(c, name, extras(schema, q.name)) && c.done;
}

function createIndex(c: Cursor, extras: (schema: string, name: string) => TableExtras): boolean {
  const unique = c.kw('unique');
  if (!c.kw('index')) return false;
  c.kw('if', 'not', 'exists');
  const name = c.ident();
  if (name === undefined || !c.kw('on')) return false;
  c.kw('only');
  const q = c.qname();
  if (!q) return false;
  let method = 'btree';
  if (c.kw('using')) method = c.ident() ?? '';
  const columns = c.identList();
  if (!columns || !c.done || !['btree', 'hash', 'gin', 'gist', 'brin', 'spgist'].includes(method)) return false;
  extras(q.schema ?? 'public', q.name).indexes.push({
    name,
    columns,
    unique,
    method: method as NonNullable<DbTable['indexes']>[number]['method'],
  });
  return true;
}

/** Sequence positions of a recording made before they were stored: just past the highest id in use. */
function positionFromRows(tables: DbTable[], seq: { schema: string; name: string }): { last: string; called: boolean } {
  let max: bigint | undefined;
  for (const table of tables) {
    for (const column of table.columns) {
      const d = column.default;
      const owned = d?.kind === 'sequence' && d.schema === seq.schema && d.name === seq.name;
      if (!owned) continue;
      for (const row of table.rows) {
        const v = row[column.name];
        if ((typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,19}$/.test(v))) {
          const b = BigInt(v);
          if (max === undefined || b > max) max = b;
        }
      }
    }
  }
  return max === undefined ? { last: '1', called: false } : { last: max.toString(), called: true };
}

/**
 * The description of a snapshot written before db.json carried one, derived from its `ddl` by
 * parsing: defaults, identity columns, unique and foreign keys, plain indexes and sequences,
 * positioned just past the highest id in use. Statements outside the grammar are listed in
 * `ignored` (their index in `ddl`). A snapshot that has `sequences` is returned as it is.
 */
export function describeFromDdl(snapshot: DbSnapshot): { snapshot: DbSnapshot; ignored: number[] } {
  if (snapshot.sequences !== undefined) return { snapshot, ignored: [] };
  const byTable = new Map<string, TableExtras>();
  const extras = (schema: string, name: string): TableExtras => {
    const key = JSON.stringify([schema, name]);
    let e = byTable.get(key);
    if (!e) {
      e = { defaults: new Map(), identity: new Map(), unique: [], foreignKeys: [], indexes: [] };
      byTable.set(key, e);
    }
    return e;
  };
  const declared: Array<{ schema: string; name: string }> = [];
  const ignored: number[] = [];
  snapshot.ddl.forEach((statement, index) => {
    const toks = tokenize(statement);
    const c = toks ? new Cursor(toks) : undefined;
    let ok = false;
    if (c?.kw('create', 'schema') || c?.kw('select', 'setval')) ok = true;
    else if (c?.kw('create', 'sequence')) {
      c.kw('if', 'not', 'exists');
      const q = c.qname();
      if (q) {
        declared.push({ schema: q.schema ?? 'public', name: q.name });
        ok = true;
      }
    } else if (c?.kw('create', 'table')) ok = createTable(c, extras);
    else if (c?.kw('alter', 'table')) ok = alterTable(c, extras);
    else if (c?.kw('create')) ok = createIndex(c, extras);
    if (!ok) ignored.push(index);
  });
  const resolve = (d: { schema?: string; name: string }, tableSchema: string) => {
    if (d.schema !== undefined) return { schema: d.schema, name: d.name };
    // An unqualified name was on the search path: the table's own schema or public.
    const hit = declared.find((s) => s.name === d.name && (s.schema === tableSchema || s.schema === 'public'));
    return { schema: hit?.schema ?? 'public', name: d.name };
  };
  const tables: DbTable[] = snapshot.tables.map((table) => {
    const e = byTable.get(JSON.stringify([table.schema, table.name]));
    if (!e) return table;
    const columns = table.columns.map((column) => {
      const d = e.defaults.get(column.name);
      const identity = e.identity.get(column.name);
      return {
        ...column,
        ...(d === undefined
          ? {}
          : { default: d.kind === 'sequence-name' ? { kind: 'sequence' as const, ...resolve(d, table.schema) } : d }),
        ...(identity === undefined ? {} : { identity }),
      };
    });
    return {
      ...table,
      columns,
      ...(e.unique.length > 0 ? { unique: e.unique } : {}),
      ...(e.foreignKeys.length > 0 ? { foreignKeys: e.foreignKeys } : {}),
      ...(e.indexes.length > 0 ? { indexes: e.indexes } : {}),
    };
  });
  const sequences: DbSequence[] = [];
  const seen = new Set<string>();
  const addSequence = (schema: string, name: string, extra: Partial<DbSequence>) => {
    const key = JSON.stringify([schema, name]);
    if (seen.has(key)) return;
    seen.add(key);
    sequences.push({
      schema,
      name,
      type: 'bigint',
      start: '1',
      increment: '1',
      min: '1',
      max: '9223372036854775807',
      cycle: false,
      ...positionFromRows(tables, { schema, name }),
      ...extra,
    });
  };
  for (const s of declared) addSequence(s.schema, s.name, {});
  for (const table of tables) {
    for (const column of table.columns) {
      if (column.default?.kind === 'sequence') addSequence(column.default.schema, column.default.name, {});
    }
  }
  return { snapshot: { ...snapshot, tables, ...(sequences.length > 0 ? { sequences } : {}) }, ignored };
}
