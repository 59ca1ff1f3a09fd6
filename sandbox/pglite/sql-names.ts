// What a connection's SQL does to the session it shares with every other connection, read from
// its tokens (never executed, never pieced together from unchecked text): the names it gives
// prepared statements (PREPARE, EXECUTE, DEALLOCATE) and cursors (DECLARE, FETCH, MOVE, CLOSE,
// WHERE CURRENT OF), rewritten to the connection's own by replacing exactly those name tokens with
// a quoted identifier; and what else it touches that a session holds: temporary objects, advisory
// locks, DISCARD.
import { quoteIdent, type SqlToken, tokenize } from '../../src/postgres/index.js';

export interface SqlUse {
  /** The text with every statement and cursor name made the connection's own. */
  sql: string;
  /** Statements PREPAREd: the backend name and the rewritten PREPARE (to make it again). */
  prepared: Array<{ name: string; sql: string }>;
  /** Backend names of statements DEALLOCATEd. */
  deallocated: string[];
  deallocateAll: boolean;
  /** Backend names of cursors declared WITH HOLD (they outlive the transaction). */
  held: string[];
  /** Backend names of cursors CLOSEd. */
  closed: string[];
  closeAll: boolean;
  discard: 'all' | 'temp' | undefined;
  /** It creates a temporary object that outlives its transaction. */
  temp: boolean;
  /** It calls a session-level advisory lock function (acquire or release). */
  sessionLock: boolean;
  /** It calls any advisory lock function, session or transaction level. */
  advisory: boolean;
}

/** Postgres truncates identifiers to 63 bytes (NAMEDATALEN - 1), as it reads them. */
function truncated(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length <= 63) return name;
  let end = 63;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.toString('utf8', 0, end);
}

const isName = (t: SqlToken | undefined): t is SqlToken =>
  t !== undefined && (t.kind === 'word' || (t.kind === 'ident' && t.v !== ''));

const SESSION_LOCKS = new Set([
  'pg_advisory_lock',
  'pg_advisory_lock_shared',
  'pg_try_advisory_lock',
  'pg_try_advisory_lock_shared',
  'pg_advisory_unlock',
  'pg_advisory_unlock_shared',
  'pg_advisory_unlock_all',
]);
const XACT_LOCKS = new Set([
  'pg_advisory_xact_lock',
  'pg_advisory_xact_lock_shared',
  'pg_try_advisory_xact_lock',
  'pg_try_advisory_xact_lock_shared',
]);
const TEMP_WORDS = new Set(['temp', 'temporary']);

/** The statements of a token list: split at top-level semicolons. */
function statementsOf(tokens: SqlToken[]): SqlToken[][] {
  const out: SqlToken[][] = [];
  let current: SqlToken[] = [];
  let depth = 0;
  for (const t of tokens) {
    if (t.kind === 'punct' && t.v === '(') depth++;
    else if (t.kind === 'punct' && t.v === ')') depth = Math.max(0, depth - 1);
    if (t.kind === 'punct' && t.v === ';' && depth === 0) {
      if (current.length > 0) out.push(current);
      current = [];
    } else current.push(t);
  }
  if (current.length > 0) out.push(current);
  return out;
}

const word = (t: SqlToken | undefined, ...values: string[]) => t?.kind === 'word' && values.includes(t.v);

/** The index of the name an EXPLAIN's EXECUTE runs, if it runs one. */
function explainedExecute(s: SqlToken[]): number | undefined {
  let i = 1;
  if (s[i]?.kind === 'punct' && s[i]?.v === '(') {
    let depth = 0;
    for (; i < s.length; i++) {
      if (s[i]?.v === '(' && s[i]?.kind === 'punct') depth++;
      if (s[i]?.v === ')' && s[i]?.kind === 'punct' && --depth === 0) break;
    }
    i++;
  }
  while (word(s[i], 'analyze', 'analyse', 'verbose')) i++;
  return word(s[i], 'execute') ? i + 1 : undefined;
}

/** A temporary object that outlives its transaction: CREATE … TEMP …, CREATE … pg_temp.x, SELECT … INTO TEMP. */
function createsTemp(s: SqlToken[]): boolean {
  const onCommitDrop = s.some((t, i) => word(t, 'on') && word(s[i + 1], 'commit') && word(s[i + 2], 'drop'));
  if (onCommitDrop) return false;
  if (word(s[0], 'create')) {
    let i = 1;
    while (word(s[i], 'or', 'replace', 'global', 'local')) i++;
    if (word(s[i], ...TEMP_WORDS)) return true;
    return s.some((t, j) => t.kind === 'word' && t.v === 'pg_temp' && s[j + 1]?.v === '.');
  }
  if (word(s[0], 'select', 'with')) {
    let depth = 0;
    for (const [j, t] of s.entries()) {
      if (t.kind === 'punct' && t.v === '(') depth++;
      else if (t.kind === 'punct' && t.v === ')') depth--;
      else if (depth === 0 && word(t, 'into') && word(s[j + 1], ...TEMP_WORDS)) return true;
    }
  }
  return false;
}

/**
 * Reads `sql` and rewrites the statement and cursor names in it with `own` (a name as the
 * backend reads it → the connection's name for it on the backend). Text that does not tokenize
 * (an unterminated string) is left as is: the backend refuses it anyway.
 */
export function readSessionUse(sql: string, own: (name: string) => string): SqlUse {
  const use: SqlUse = {
    sql,
    prepared: [],
    deallocated: [],
    deallocateAll: false,
    held: [],
    closed: [],
    closeAll: false,
    discard: undefined,
    temp: false,
    sessionLock: false,
    advisory: false,
  };
  const tokens = tokenize(sql);
  if (!tokens) return use;
  const edits: Array<{ token: SqlToken; name: string }> = [];
  const rename = (t: SqlToken | undefined): string | undefined => {
    if (!isName(t)) return undefined;
    const name = own(truncated(t.v));
    edits.push({ token: t, name });
    return name;
  };
  const pending: Array<{ name: string; from: number; to: number }> = [];
  for (const s of statementsOf(tokens)) {
    const first = s[0] as SqlToken;
    const head = first.kind === 'word' ? first.v : '';
    if (head === 'prepare' && !(word(s[1], 'transaction') && s[2]?.kind === 'string')) {
      const name = rename(s[1]);
      if (name) pending.push({ name, from: first.start, to: (s.at(-1) as SqlToken).end });
    } else if (head === 'execute') rename(s[1]);
    else if (head === 'explain') {
      const at = explainedExecute(s);
      if (at !== undefined) rename(s[at]);
    } else if (head === 'create') {
      const at = s.findIndex((t, i) => word(t, 'as') && word(s[i + 1], 'execute'));
      if (at >= 0) rename(s[at + 2]);
    } else if (head === 'deallocate') {
      const target = word(s[1], 'prepare') ? s[2] : s[1];
      if (word(target, 'all')) use.deallocateAll = true;
      else {
        const name = rename(target);
        if (name) use.deallocated.push(name);
      }
    } else if (head === 'declare') {
      const name = rename(s[1]);
      const hold = s.some((t, i) => word(t, 'with') && word(s[i + 1], 'hold'));
      if (name && hold) use.held.push(name);
    } else if (head === 'fetch' || head === 'move') rename(s.at(-1));
    else if (head === 'close') {
      if (word(s[1], 'all')) use.closeAll = true;
      else {
        const name = rename(s[1]);
        if (name) use.closed.push(name);
      }
    } else if (head === 'discard') {
      if (word(s[1], 'all')) use.discard = 'all';
      else if (word(s[1], 'temp', 'temporary')) use.discard ??= 'temp';
    }
    if (head !== 'fetch' && head !== 'move') {
      for (const [i, t] of s.entries()) {
        if (word(t, 'current') && word(s[i + 1], 'of') && word(s[i - 1], 'where')) rename(s[i + 2]);
      }
    }
    if (createsTemp(s)) use.temp = true;
    for (const [i, t] of s.entries()) {
      if ((t.kind !== 'word' && t.kind !== 'ident') || s[i + 1]?.v !== '(') continue;
      if (SESSION_LOCKS.has(t.v)) use.sessionLock = use.advisory = true;
      else if (XACT_LOCKS.has(t.v)) use.advisory = true;
    }
  }
  if (edits.length === 0) return use;
  const rewrite = (from: number, to: number) => {
    let out = '';
    let at = from;
    for (const { token, name } of edits) {
      if (token.start < from || token.end > to) continue;
      out += sql.slice(at, token.start) + quoteIdent(name);
      at = token.end;
    }
    return out + sql.slice(at, to);
  };
  edits.sort((a, b) => a.token.start - b.token.start);
  use.sql = rewrite(0, sql.length);
  use.prepared = pending.map(({ name, from, to }) => ({ name, sql: rewrite(from, to) }));
  return use;
}
