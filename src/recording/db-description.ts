// The schema description of a database snapshot read out of SQL text, never by running it: a
// column default as the catalog prints it (pg_get_expr), and the `ddl` of recordings made before
// db.json carried the description (migrated on read). Only an allow-listed grammar is understood;
// anything else is left out of the description and reported.
import {
  DEFAULT_FUNCTIONS,
  GENERATED_FUNCTIONS,
  type GENERATED_OPERATORS,
  type GeneratedExpr,
  PartitionBoundSchema,
} from './schema.js';
import type { ColumnDefault, DbSequence, DbSnapshot, DbTable, PartitionBound } from './types.js';

type Token =
  | { t: 'id'; v: string; quoted: boolean }
  | { t: 'str'; v: string }
  | { t: 'num'; v: string }
  | { t: 'p'; v: string };

const MAX_SQL = 100_000;
const OPERATOR_CHARS = '+-*/<>=~!@#%^&|`?';

/** Splits SQL text into identifiers, strings, numbers and punctuation; undefined for anything else. */
function tokenize(sql: string): Token[] | undefined {
  if (sql.length > MAX_SQL) return undefined;
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let v = '';
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) return undefined;
        if (sql[j] === c) {
          if (sql[j + 1] === c) {
            v += c;
            j += 2;
            continue;
          }
          break;
        }
        v += sql[j];
        j++;
      }
      out.push(c === '"' ? { t: 'id', v, quoted: true } : { t: 'str', v });
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i, i + 200));
    if (word) {
      out.push({ t: 'id', v: word[0].toLowerCase(), quoted: false });
      i += word[0].length;
      continue;
    }
    const num = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(sql.slice(i, i + 400));
    if (num) {
      out.push({ t: 'num', v: num[0] });
      i += num[0].length;
      continue;
    }
    if (sql.startsWith('::', i)) {
      out.push({ t: 'p', v: '::' });
      i += 2;
      continue;
    }
    // An operator is the longest run of operator characters (`<=`, `~~*`, `||`), as Postgres's
    // lexer reads it: one of several characters does not end in + or - unless it holds ~!@#%^&|`?.
    if (OPERATOR_CHARS.includes(c)) {
      let j = i;
      while (j < sql.length && OPERATOR_CHARS.includes(sql[j] as string)) j++;
      let op = sql.slice(i, j);
      while (op.length > 1 && /[+-]$/.test(op) && !/[~!@#%^&|`?]/.test(op)) op = op.slice(0, -1);
      out.push({ t: 'p', v: op });
      i += op.length;
      continue;
    }
    if ('(),.;[]:{}'.includes(c)) {
      out.push({ t: 'p', v: c });
      i++;
      continue;
    }
    return undefined;
  }
  while (out.at(-1)?.t === 'p' && out.at(-1)?.v === ';') out.pop();
  return out;
}

const isKw = (tok: Token | undefined, word: string): boolean => tok?.t === 'id' && !tok.quoted && tok.v === word;
const isP = (tok: Token | undefined, p: string): boolean => tok?.t === 'p' && tok.v === p;

/** A cursor over tokens; every method returns undefined (or false) instead of throwing. */
class Cursor {
  i = 0;
  constructor(readonly toks: Token[]) {}
  get done(): boolean {
    return this.i >= this.toks.length;
  }
  peek(offset = 0): Token | undefined {
    return this.toks[this.i + offset];
  }
  kw(...words: string[]): boolean {
    for (let k = 0; k < words.length; k++) if (!isKw(this.peek(k), words[k] as string)) return false;
    this.i += words.length;
    return true;
  }
  p(v: string): boolean {
    if (!isP(this.peek(), v)) return false;
    this.i++;
    return true;
  }
  ident(): string | undefined {
    const tok = this.peek();
    if (tok?.t !== 'id') return undefined;
    this.i++;
    return tok.v;
  }
  /** schema.name or name. */
  qname(): { schema?: string; name: string } | undefined {
    const first = this.ident();
    if (first === undefined) return undefined;
    if (!this.p('.')) return { name: first };
    const second = this.ident();
    return second === undefined ? undefined : { schema: first, name: second };
  }
  /** ( ident, ident, … ) */
  identList(): string[] | undefined {
    if (!this.p('(')) return undefined;
    const out: string[] = [];
    for (;;) {
      const name = this.ident();
      if (name === undefined) return undefined;
      out.push(name);
      if (this.p(')')) return out;
      if (!this.p(',')) return undefined;
    }
  }
  /** Tokens up to the matching close paren or a top-level comma/close (not consumed). */
  until(stop: (tok: Token, depth: number) => boolean): Token[] {
    const out: Token[] = [];
    let depth = 0;
    while (!this.done) {
      const tok = this.peek() as Token;
      if (depth === 0 && stop(tok, depth)) break;
      if (isP(tok, '(')) depth++;
      if (isP(tok, ')')) {
        if (depth === 0) break;
        depth--;
      }
      out.push(tok);
      this.i++;
    }
    return out;
  }
}

const FUNCTION_SET = new Set<string>(DEFAULT_FUNCTIONS);
const BARE_FUNCTIONS = new Set(['current_timestamp', 'current_date', 'current_time', 'localtimestamp']);

/** A default given as tokens; sequences come back with their (possibly unqualified) name. */
function defaultOf(
  toks: Token[],
): ColumnDefault | { kind: 'sequence-name'; schema?: string; name: string } | undefined {
  let list = toks;
  while (list.length >= 2 && isP(list[0], '(') && isP(list.at(-1), ')')) list = list.slice(1, -1);
  const c = new Cursor(list);
  if (c.kw('nextval') && c.p('(')) {
    const arg = c.peek();
    if (arg?.t !== 'str') return undefined;
    c.i++;
    if (c.p('::') && !c.kw('regclass')) return undefined;
    if (!c.p(')') || !c.done) return undefined;
    const inner = tokenize(arg.v);
    if (!inner) return undefined;
    const name = new Cursor(inner).qname();
    if (!name || inner.length !== (name.schema === undefined ? 1 : 3)) return undefined;
    return { kind: 'sequence-name', ...name };
  }
  c.i = 0;
  const first = c.peek();
  // A constant, possibly cast: 'text'::type, -1, 1.5, true, NULL::text.
  const skipCast = () => {
    while (c.p('::')) {
      while (c.peek()?.t === 'id') c.i++;
      if (c.p('(')) {
        c.until(() => false);
        if (!c.p(')')) return false;
      }
      while (c.p('[')) if (!c.p(']')) return false;
    }
    return c.done;
  };
  if (first?.t === 'str') {
    c.i++;
    return skipCast() ? { kind: 'value', value: first.v } : undefined;
  }
  if (first?.t === 'num' || (isP(first, '-') && c.peek(1)?.t === 'num')) {
    const negative = c.p('-');
    const digits = (c.peek() as { v: string }).v;
    c.i++;
    if (!skipCast()) return undefined;
    const text = `${negative ? '-' : ''}${digits}`;
    const n = Number(text);
    return {
      kind: 'value',
      value: Number.isSafeInteger(n) || (!/^-?\d+$/.test(text) && Number.isFinite(n)) ? n : text,
    };
  }
  if (isKw(first, 'true') || isKw(first, 'false') || isKw(first, 'null')) {
    c.i++;
    if (!skipCast()) return undefined;
    return { kind: 'value', value: isKw(first, 'null') ? null : isKw(first, 'true') };
  }
  if (first?.t === 'id' && !first.quoted && FUNCTION_SET.has(first.v)) {
    c.i++;
    if (BARE_FUNCTIONS.has(first.v) && c.done)
      return { kind: 'function', name: first.v as (typeof DEFAULT_FUNCTIONS)[number] };
    if (c.p('(') && c.p(')') && skipCast())
      return { kind: 'function', name: first.v as (typeof DEFAULT_FUNCTIONS)[number] };
  }
  return undefined;
}

/**
 * A column default as Postgres prints it (`nextval('s.x_seq'::regclass)`, `'new'::text`, `now()`),
 * as data; undefined for any other expression. An unqualified sequence is taken to be in `schema`.
 */
export function parseColumnDefault(expression: string, schema = 'public'): ColumnDefault | undefined {
  const toks = tokenize(expression);
  if (!toks || toks.length === 0) return undefined;
  const parsed = defaultOf(toks);
  if (parsed?.kind === 'sequence-name') return { kind: 'sequence', schema: parsed.schema ?? schema, name: parsed.name };
  return parsed;
}

const GENERATED_FUNCTION_SET = new Set<string>(GENERATED_FUNCTIONS);
const MAX_EXPR_DEPTH = 32;

/**
 * An expression as the catalog prints it (pg_get_expr: a generated column's `(qty * price)`,
 * `((first || ' '::text) || last)`, `lower(email)`; a CHECK's `((qty > 0) AND (status = ANY
 * (ARRAY['a'::text, 'b'::text])))`), as data; undefined for anything outside
 * GeneratedExpr's grammar or naming a column not in `columns`.
 */
export function parseGeneratedExpression(expression: string, columns: ReadonlySet<string>): GeneratedExpr | undefined {
  const toks = tokenize(expression);
  if (!toks || toks.length === 0) return undefined;
  const c = new Cursor(toks);
  // Postgres's precedence, lowest first: OR, AND, NOT, IS [NOT] NULL, comparisons, any other
  // operator (||, LIKE's ~~, regex matches), + -, * / %; then unary minus and casts.
  const LEVELS: ReadonlyArray<readonly string[]> = [
    ['or'],
    ['and'],
    [],
    [],
    ['=', '<>', '<', '<=', '>', '>='],
    ['||', '~~', '!~~', '~~*', '!~~*', '~', '~*', '!~', '!~*'],
    ['+', '-'],
    ['*', '/', '%'],
  ];
  type Op = (typeof GENERATED_OPERATORS)[number];
  const operatorAt = (here: readonly string[]): string | undefined => {
    const tok = c.peek();
    if (tok?.t === 'p') return here.find((o) => o === tok.v);
    return tok?.t === 'id' && !tok.quoted ? here.find((o) => o === tok.v) : undefined;
  };
  const binary = (level: number, depth: number): GeneratedExpr | undefined => {
    if (depth > MAX_EXPR_DEPTH) return undefined;
    if (level === 2 && c.kw('not')) {
      const arg = binary(2, depth + 1);
      return arg === undefined ? undefined : { op: 'not', args: [arg] };
    }
    if (level === 3) {
      const arg = binary(4, depth);
      if (arg !== undefined && c.kw('is', 'null')) return { op: 'is null', args: [arg] };
      if (arg !== undefined && c.kw('is', 'not', 'null')) return { op: 'is not null', args: [arg] };
      return arg;
    }
    const here = LEVELS[level];
    if (here === undefined) return unary(depth);
    // Depth counts nesting (parentheses, calls, operands), not the levels of precedence.
    let left = binary(level + 1, depth);
    for (;;) {
      if (left === undefined) return undefined;
      const op = operatorAt(here);
      if (op === undefined) return left;
      c.i++;
      // `a = ANY (b)`, `a <> ALL (b)`: a comparison against each element of an array.
      const quantified = level === 4 ? (c.kw('any') ? 'any' : c.kw('all') ? 'all' : undefined) : undefined;
      const right = quantified === undefined ? binary(level + 1, depth + 1) : postfix(depth + 1);
      if (right === undefined) return undefined;
      left = { op: op as Op, args: [left, right], ...(quantified === undefined ? {} : { quantified }) };
    }
  };
  const unary = (depth: number): GeneratedExpr | undefined => {
    if (c.p('-')) {
      const arg = unary(depth + 1);
      return arg === undefined ? undefined : { op: '-', args: [arg] };
    }
    return postfix(depth);
  };
  const postfix = (depth: number): GeneratedExpr | undefined => {
    let e = primary(depth);
    while (e !== undefined && c.p('::')) {
      const words: string[] = [];
      while (c.peek()?.t === 'id' && !(c.peek() as { quoted: boolean }).quoted) words.push((c.ident() as string) ?? '');
      if (words.length === 0) return undefined;
      let type = words.join(' ');
      if (c.p('(')) {
        const mods: string[] = [];
        for (;;) {
          const n = c.peek();
          if (n?.t !== 'num') return undefined;
          c.i++;
          mods.push(n.v);
          if (c.p(')')) break;
          if (!c.p(',')) return undefined;
        }
        type += `(${mods.join(',')})`;
        // `timestamp(3) with time zone`: the zone comes after the modifier.
        const zone: string[] = [];
        while (isKw(c.peek(), 'with') || isKw(c.peek(), 'without') || isKw(c.peek(), 'time') || isKw(c.peek(), 'zone'))
          zone.push(c.ident() as string);
        if (zone.length > 0) type += ` ${zone.join(' ')}`;
      }
      while (c.p('[')) {
        if (!c.p(']')) return undefined;
        type += '[]';
      }
      e = { cast: type, arg: e };
    }
    return e;
  };
  const primary = (depth: number): GeneratedExpr | undefined => {
    const tok = c.peek();
    if (tok === undefined) return undefined;
    if (isP(tok, '(')) {
      c.i++;
      const inner = binary(0, depth + 1);
      return inner !== undefined && c.p(')') ? inner : undefined;
    }
    if (tok.t === 'str') {
      c.i++;
      return { value: tok.v };
    }
    if (tok.t === 'num') {
      c.i++;
      // A constant a double cannot hold exactly is not described (it would change).
      const n = Number(tok.v);
      return Number.isSafeInteger(n) || (!/^\d+$/.test(tok.v) && String(n) === tok.v) ? { value: n } : undefined;
    }
    if (tok.t !== 'id') return undefined;
    c.i++;
    if (!tok.quoted && (tok.v === 'true' || tok.v === 'false')) return { value: tok.v === 'true' };
    if (!tok.quoted && tok.v === 'array' && c.p('[')) {
      const array: GeneratedExpr[] = [];
      if (c.p(']')) return { array };
      for (;;) {
        const item = binary(0, depth + 1);
        if (item === undefined) return undefined;
        array.push(item);
        if (c.p(']')) return { array };
        if (!c.p(',')) return undefined;
      }
    }
    if (!tok.quoted && tok.v === 'null') return { value: null };
    if (isP(c.peek(), '(')) {
      if (tok.quoted || !GENERATED_FUNCTION_SET.has(tok.v)) return undefined;
      c.i++;
      const args: GeneratedExpr[] = [];
      if (!c.p(')')) {
        for (;;) {
          const arg = binary(0, depth + 1);
          if (arg === undefined) return undefined;
          args.push(arg);
          if (c.p(')')) break;
          if (!c.p(',')) return undefined;
        }
      }
      return { call: tok.v as (typeof GENERATED_FUNCTIONS)[number], args };
    }
    return columns.has(tok.v) ? { column: tok.v } : undefined;
  };
  const parsed = binary(0, 0);
  return parsed !== undefined && c.done ? parsed : undefined;
}

type BoundValue = Extract<PartitionBound, { kind: 'range' }>['from'][number];

/** `( value, … )` of a partition bound: constants, MINVALUE, MAXVALUE. */
function boundValues(c: Cursor): BoundValue[] | undefined {
  if (!c.p('(')) return undefined;
  const out: BoundValue[] = [];
  for (;;) {
    const negative = c.p('-');
    const tok = c.peek();
    c.i++;
    if (tok?.t === 'str' && !negative) out.push(tok.v);
    else if (tok?.t === 'num') {
      const text = `${negative ? '-' : ''}${tok.v}`;
      const n = Number(text);
      // A number a double cannot hold exactly stays text (Postgres reads it as the key's type).
      out.push(Number.isSafeInteger(n) || (!/^-?\d+$/.test(text) && String(n) === text) ? n : text);
    } else if (!negative && (isKw(tok, 'minvalue') || isKw(tok, 'maxvalue')))
      out.push({ bound: (tok as { v: 'minvalue' | 'maxvalue' }).v });
    else if (!negative && (isKw(tok, 'true') || isKw(tok, 'false'))) out.push(isKw(tok, 'true'));
    else if (!negative && isKw(tok, 'null')) out.push(null);
    else return undefined;
    if (c.p(')')) return out;
    if (!c.p(',')) return undefined;
  }
}

/**
 * A partition's bound as the catalog prints it (pg_get_expr of relpartbound: `FOR VALUES FROM
 * ('2025-01-01') TO (MAXVALUE)`, `FOR VALUES IN ('fr', 'de')`, `FOR VALUES WITH (modulus 4,
 * remainder 0)`, `DEFAULT`), as data; undefined for anything else.
 */
export function parsePartitionBound(text: string): PartitionBound | undefined {
  const toks = tokenize(text);
  if (!toks) return undefined;
  const c = new Cursor(toks);
  let bound: PartitionBound | undefined;
  if (c.kw('default')) bound = { kind: 'default' };
  else if (c.kw('for', 'values', 'in')) {
    const values = boundValues(c);
    bound = values && values.length > 0 ? { kind: 'list', values } : undefined;
  } else if (c.kw('for', 'values', 'from')) {
    const from = boundValues(c);
    const to = c.kw('to') ? boundValues(c) : undefined;
    bound = from && to ? { kind: 'range', from, to } : undefined;
  } else if (c.kw('for', 'values', 'with') && c.p('(') && c.kw('modulus')) {
    const modulus = c.peek();
    c.i++;
    const remainder = c.p(',') && c.kw('remainder') ? c.peek() : undefined;
    c.i++;
    if (modulus?.t === 'num' && remainder?.t === 'num' && c.p(')'))
      bound = { kind: 'hash', modulus: Number(modulus.v), remainder: Number(remainder.v) };
  }
  if (bound === undefined || !c.done) return undefined;
  return PartitionBoundSchema.safeParse(bound).success ? bound : undefined;
}

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
