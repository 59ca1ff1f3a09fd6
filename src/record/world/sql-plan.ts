// Reads just enough of one SQL statement to capture what it does to the rows of one table: its
// kind, its target table and alias, and where a RETURNING clause is or can be added. The text is
// tokenized (strings, quoted identifiers, dollar quotes, comments, parameters), never executed or
// fully parsed; anything the planner does not recognise is `other` and passes through untouched.
import { type SqlToken as Token, tokenize } from '../../postgres/index.js';

export type StatementKind =
  | 'read'
  | 'insert'
  | 'update'
  | 'delete'
  | 'begin'
  | 'commit'
  | 'rollback'
  | 'savepoint'
  /** A write the planner cannot capture (a data-modifying WITH, MERGE, COPY, several statements). */
  | 'unobserved-write'
  | 'other';

export interface StatementPlan {
  kind: StatementKind;
  /** insert/update/delete: the target table as written. */
  table?: { schema?: string; name: string };
  /** The name the target is referred to by in RETURNING (its alias, else its name). */
  ref?: string;
  /** Offset of a top-level RETURNING keyword, or -1. */
  returningAt?: number;
  /** Offset just past the statement's last token (before a trailing `;`, comment or space). */
  end?: number;
  /** insert: it has an ON CONFLICT clause (the row may be an update). */
  upsert?: boolean;
}

const READS = new Set(['select', 'values', 'table', 'show', 'explain', 'fetch']);
const WRITES = new Set(['insert', 'update', 'delete', 'merge', 'copy', 'truncate']);

/** What `sql` does, as far as row capture needs to know. */
export function planStatement(sql: string): StatementPlan {
  const tokens = tokenize(sql);
  if (tokens === undefined || tokens.length === 0) return { kind: 'other' };
  // Several statements in one text: only the simple protocol allows it; not captured.
  let last = tokens.length;
  while (last > 0 && isPunct(tokens[last - 1], ';')) last--;
  const body = tokens.slice(0, last);
  if (body.some((t) => isPunct(t, ';'))) {
    return { kind: body.some((t) => t.kind === 'word' && WRITES.has(t.v)) ? 'unobserved-write' : 'other' };
  }
  const first = body[0] as Token;
  const end = (body.at(-1) as Token).end;
  if (first.kind !== 'word') return isPunct(first, '(') ? { kind: 'read' } : { kind: 'other' };
  switch (first.v) {
    case 'begin':
    case 'start':
      return { kind: 'begin' };
    case 'commit':
    case 'end':
      return { kind: 'commit' };
    case 'abort':
      return { kind: 'rollback' };
    case 'rollback':
      // ROLLBACK TO SAVEPOINT undoes part of a transaction: not followed (see observed.ts).
      return body.some((t) => t.kind === 'word' && t.v === 'to') ? { kind: 'savepoint' } : { kind: 'rollback' };
    case 'savepoint':
    case 'release':
      return { kind: 'savepoint' };
    case 'with':
      return body.some((t) => t.kind === 'word' && WRITES.has(t.v) && t !== first)
        ? { kind: 'unobserved-write' }
        : { kind: 'read' };
    case 'insert':
      return planInsert(body, end);
    case 'update':
      return planUpdate(body, end);
    case 'delete':
      return planDelete(body, end);
    case 'merge':
    case 'copy':
    case 'truncate':
      return { kind: 'unobserved-write' };
    default:
      return READS.has(first.v) ? { kind: 'read' } : { kind: 'other' };
  }
}

const isWord = (t: Token | undefined, v: string) => t?.kind === 'word' && t.v === v;
/** Punctuation only: a quoted identifier ";" or "*" is a name. */
const isPunct = (t: Token | undefined, v: string) => t?.kind === 'punct' && t.v === v;
const isName = (t: Token | undefined) => t?.kind === 'ident' || t?.kind === 'word';

/** schema.name or name at tokens[i]; returns it and the index after it. */
function qualifiedName(
  tokens: Token[],
  i: number,
): { name: { schema?: string; name: string }; next: number } | undefined {
  const a = tokens[i];
  if (!isName(a)) return undefined;
  if (isPunct(tokens[i + 1], '.') && isName(tokens[i + 2])) {
    if (isPunct(tokens[i + 3], '.')) return undefined; // database.schema.table
    return { name: { schema: (a as Token).v, name: (tokens[i + 2] as Token).v }, next: i + 3 };
  }
  return { name: { name: (a as Token).v }, next: i + 1 };
}

/** The offset of a RETURNING keyword outside any parentheses, or -1. */
function topLevelReturning(tokens: Token[], from: number): number {
  let depth = 0;
  for (let i = from; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.kind === 'punct' && (t.v === '(' || t.v === '[')) depth++;
    else if (t.kind === 'punct' && (t.v === ')' || t.v === ']')) depth--;
    else if (depth === 0 && isWord(t, 'returning')) return t.start;
  }
  return -1;
}

/** An alias after the table name: `AS x`, or a bare word that is not the next clause's keyword. */
function aliasAt(tokens: Token[], i: number, clauses: Set<string>): { alias?: string; next: number } {
  if (isWord(tokens[i], 'as') && isName(tokens[i + 1])) return { alias: (tokens[i + 1] as Token).v, next: i + 2 };
  const t = tokens[i];
  if (t?.kind === 'ident' || (t?.kind === 'word' && !clauses.has(t.v))) return { alias: t.v, next: i + 1 };
  return { next: i };
}

function planInsert(tokens: Token[], end: number): StatementPlan {
  if (!isWord(tokens[1], 'into')) return { kind: 'unobserved-write' };
  const target = qualifiedName(tokens, 2);
  if (target === undefined) return { kind: 'unobserved-write' };
  // INSERT allows only `AS alias`.
  const aliased = isWord(tokens[target.next], 'as') && isName(tokens[target.next + 1]);
  const ref = aliased ? (tokens[target.next + 1] as Token).v : target.name.name;
  let upsert = false;
  for (let i = target.next; i < tokens.length - 1; i++) {
    if (isWord(tokens[i], 'on') && isWord(tokens[i + 1], 'conflict')) upsert = true;
  }
  return { kind: 'insert', table: target.name, ref, returningAt: topLevelReturning(tokens, target.next), end, upsert };
}

function planUpdate(tokens: Token[], end: number): StatementPlan {
  let i = 1;
  if (isWord(tokens[i], 'only')) i++;
  const target = qualifiedName(tokens, i);
  if (target === undefined) return { kind: 'unobserved-write' };
  i = target.next;
  if (isPunct(tokens[i], '*')) i++;
  const { alias } = aliasAt(tokens, i, new Set(['set']));
  return {
    kind: 'update',
    table: target.name,
    ref: alias ?? target.name.name,
    returningAt: topLevelReturning(tokens, i),
    end,
  };
}

function planDelete(tokens: Token[], end: number): StatementPlan {
  if (!isWord(tokens[1], 'from')) return { kind: 'unobserved-write' };
  let i = 2;
  if (isWord(tokens[i], 'only')) i++;
  const target = qualifiedName(tokens, i);
  if (target === undefined) return { kind: 'unobserved-write' };
  i = target.next;
  if (isPunct(tokens[i], '*')) i++;
  const { alias } = aliasAt(tokens, i, new Set(['using', 'where', 'returning']));
  return {
    kind: 'delete',
    table: target.name,
    ref: alias ?? target.name.name,
    returningAt: topLevelReturning(tokens, i),
    end,
  };
}

/** `sql` with `items` added to its RETURNING list (or a RETURNING clause added) at the plan's end. */
export function withReturning(sql: string, plan: StatementPlan, items: string): string {
  const end = plan.end ?? sql.length;
  const addition = (plan.returningAt ?? -1) >= 0 ? `, ${items}` : ` RETURNING ${items}`;
  return `${sql.slice(0, end)}${addition}${sql.slice(end)}`;
}
