// Reads just enough of one SQL statement to capture what it does to the rows of one table: its
// kind, its target table and alias, and where a RETURNING clause is or can be added. The text is
// tokenized (strings, quoted identifiers, dollar quotes, comments, parameters), never executed or
// fully parsed; anything the planner does not recognise is `other` and passes through untouched.
import { quoteIdent, type SqlToken as Token, tokenize } from '../../postgres/index.js';

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
  /** update: the columns its SET list assigns (`a = …`, `(a, b) = …`), as written. */
  setTargets?: string[];
  /** update: where a row source joined by the old row (withOldRow) goes. */
  old?: OldRowPlace;
}

/** Offsets in an UPDATE's text that withOldRow edits. */
export interface OldRowPlace {
  /** Just past a top-level FROM keyword, or -1 (none: one is added before `where`). */
  from: number;
  /** Just past a top-level WHERE keyword, or -1. */
  where: number;
  /** Where the WHERE clause (or the statement before RETURNING) ends. */
  whereEnd: number;
  /** Offsets of `*` items of its RETURNING list (with a row source added, they would return its columns too). */
  stars: number[];
  /** `WHERE CURRENT OF cursor`: no condition can be added. */
  currentOf: boolean;
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
  const returningAt = topLevelReturning(tokens, i);
  return {
    kind: 'update',
    table: target.name,
    ref: alias ?? target.name.name,
    returningAt,
    end,
    ...updateClauses(tokens, i, returningAt < 0 ? end : returningAt),
  };
}

/** The SET list's targets and the places of FROM, WHERE and RETURNING's `*` items in an UPDATE. */
function updateClauses(tokens: Token[], from: number, whereEnd: number): Pick<StatementPlan, 'setTargets' | 'old'> {
  const setTargets: string[] = [];
  const old: OldRowPlace = { from: -1, where: -1, whereEnd, stars: [], currentOf: false };
  let depth = 0;
  let clause = '';
  let itemStart = false;
  let inTargetList = false;
  for (let i = from; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const prev = tokens[i - 1];
    if (t.kind === 'punct' && (t.v === '(' || t.v === '[')) {
      if (clause === 'set' && itemStart && depth === 0) inTargetList = true;
      depth++;
      itemStart = false;
      continue;
    }
    if (t.kind === 'punct' && (t.v === ')' || t.v === ']')) {
      depth--;
      inTargetList = false;
      continue;
    }
    if (depth === 0 && t.kind === 'word' && ['set', 'from', 'where', 'returning'].includes(t.v)) {
      clause = t.v;
      itemStart = clause === 'set';
      if (clause === 'from') old.from = t.end;
      if (clause === 'where') {
        old.where = t.end;
        old.currentOf = isWord(tokens[i + 1], 'current') && isWord(tokens[i + 2], 'of');
      }
      continue;
    }
    if (clause === 'set' && ((depth === 0 && itemStart) || (depth === 1 && inTargetList)) && isName(t))
      setTargets.push(t.v);
    if (clause === 'returning' && depth === 0 && t.v === '*' && (prev?.v === ',' || isWord(prev, 'returning')))
      old.stars.push(t.start);
    itemStart = depth === 0 && t.kind === 'punct' && t.v === ',';
  }
  return { setTargets, old };
}

/**
 * An UPDATE joined to its rows as they were before it: `source` (a row source aliased
 * `alias`) added to its FROM list (or as one), `match` added to its WHERE clause (or as one),
 * and each `*` item of its RETURNING list written `ref.*`, so the agent's result keeps its columns
 * (undefined where it cannot be: `WHERE CURRENT OF`, or `RETURNING *` with a FROM list of its own).
 */
export function withOldRow(sql: string, plan: StatementPlan, source: string, match: string): string | undefined {
  const old = plan.old;
  if (plan.kind !== 'update' || old === undefined || old.currentOf || plan.ref === undefined) return undefined;
  // `RETURNING *` of an UPDATE … FROM returns every FROM item's columns: the added one's too.
  if (old.from >= 0 && old.stars.length > 0) return undefined;
  const edits: Array<[number, string]> = [];
  if (old.from >= 0) edits.push([old.from, ` ${source},`]);
  else edits.push([old.where >= 0 ? old.where - 'where'.length : old.whereEnd, ` FROM ${source} `]);
  if (old.where >= 0) {
    edits.push([old.where, ' (']);
    edits.push([old.whereEnd, `) AND ${match} `]);
  } else edits.push([old.whereEnd, ` WHERE ${match} `]);
  for (const star of old.stars) edits.push([star, `${quoteIdent(plan.ref)}.`]);
  let out = sql;
  // From the last offset back, so each earlier one stays where it was (a stable sort keeps the
  // FROM insertion before the WHERE one when they meet at one offset).
  for (const [at, text] of edits
    .map((e, i) => [e, i] as const)
    .sort((a, b) => b[0][0] - a[0][0] || b[1] - a[1])
    .map(([e]) => e))
    out = `${out.slice(0, at)}${text}${out.slice(at)}`;
  return out;
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
