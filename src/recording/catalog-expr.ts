// A column default, an expression (a generated column's, a CHECK's) and a partition bound as the
// catalog prints them (pg_get_expr), read as data out of their text, never by running it. Only an
// allow-listed grammar is understood; anything else is undefined.
import {
  DEFAULT_FUNCTIONS,
  GENERATED_FUNCTIONS,
  type GENERATED_OPERATORS,
  type GeneratedExpr,
  IntervalTextSchema,
  PartitionBoundSchema,
  SERVER_CLOCK_FUNCTIONS,
} from './schema.js';
import { Cursor, isKw, isP, type Token, tokenize } from './sql-cursor.js';
import type { ColumnDefault, PartitionBound } from './types.js';

const FUNCTION_SET = new Set<string>(DEFAULT_FUNCTIONS);
const SERVER_CLOCK_SET = new Set<string>(SERVER_CLOCK_FUNCTIONS);
const BARE_FUNCTIONS = new Set(['current_timestamp', 'current_date', 'current_time', 'localtimestamp']);

/** A default given as tokens; sequences come back with their (possibly unqualified) name. */
export function defaultOf(
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
      // The type, schema-qualified where its schema is not on the path (`'new'::shop."Status"`).
      while (c.peek()?.t === 'id' || (isP(c.peek(), '.') && c.peek(1)?.t === 'id')) c.i++;
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
    const name = first.v as (typeof DEFAULT_FUNCTIONS)[number];
    if (BARE_FUNCTIONS.has(first.v) && c.done) return { kind: 'function', name };
    if (BARE_FUNCTIONS.has(first.v) || (c.p('(') && c.p(')'))) {
      if (skipCast()) return { kind: 'function', name };
      // A clock and an interval constant: `now() + '14 days'::interval`, an expiry.
      const sign = c.p('+') ? 'plus' : c.p('-') ? 'minus' : undefined;
      const interval = c.peek();
      if (sign === undefined || interval?.t !== 'str' || !SERVER_CLOCK_SET.has(name)) return undefined;
      c.i++;
      if (!c.p('::') || !c.kw('interval') || !c.done) return undefined;
      const text = IntervalTextSchema.safeParse(interval.v);
      return text.success ? { kind: 'function', name, [sign]: text.data } : undefined;
    }
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
