// SQL text as tokens (identifiers, strings, numbers, punctuation) and a cursor over them that never
// throws: what src/recording/catalog-expr.ts and db-description.ts read the catalog's and an old
// recording's SQL with, never running it. The text is lexed by src/postgres/sql-tokens.ts, the one
// SQL lexer (no imports of its own: the recording layer stays light); here its tokens are read as
// values (a string's text, a number's digits) and operators (`<=`, `::`), as an expression needs.
import { tokenize as lex, type SqlToken } from '../postgres/sql-tokens.js';

export type Token =
  | { t: 'id'; v: string; quoted: boolean }
  | { t: 'str'; v: string }
  | { t: 'num'; v: string }
  | { t: 'p'; v: string };

const MAX_SQL = 100_000;
const OPERATOR_CHARS = '+-*/<>=~!@#%^&|`?';
const PUNCTUATION = '(),.;[]:{}';

/**
 * Splits SQL text into identifiers, strings, numbers and punctuation; undefined for anything else
 * (a parameter, a character SQL has no use for, text the lexer cannot read).
 */
export function tokenize(sql: string): Token[] | undefined {
  const lexed = lex(sql, MAX_SQL);
  if (lexed === undefined) return undefined;
  const out: Token[] = [];
  for (let k = 0; k < lexed.length; k++) {
    const tok = lexed[k] as SqlToken;
    if (tok.kind === 'word' || tok.kind === 'ident') out.push({ t: 'id', v: tok.v, quoted: tok.kind === 'ident' });
    else if (tok.kind === 'string') out.push({ t: 'str', v: tok.text ?? '' });
    else if (tok.kind === 'number') out.push({ t: 'num', v: decimal(tok.v) });
    else if (tok.kind === 'param') return undefined;
    else if (OPERATOR_CHARS.includes(tok.v)) {
      // An operator is the longest run of operator characters (`<=`, `~~*`, `||`), as Postgres's
      // lexer reads it: one of several characters does not end in + or - unless it holds ~!@#%^&|`?.
      let end = k;
      while (touching(lexed, end) && OPERATOR_CHARS.includes((lexed[end + 1] as SqlToken).v)) end++;
      let op = sql.slice(tok.start, (lexed[end] as SqlToken).end);
      while (op.length > 1 && /[+-]$/.test(op) && !/[~!@#%^&|`?]/.test(op)) op = op.slice(0, -1);
      out.push({ t: 'p', v: op });
      k += op.length - 1;
    } else if (tok.v === ':' && touching(lexed, k) && lexed[k + 1]?.v === ':') {
      out.push({ t: 'p', v: '::' });
      k++;
    } else if (PUNCTUATION.includes(tok.v)) out.push({ t: 'p', v: tok.v });
    else return undefined;
  }
  while (out.at(-1)?.t === 'p' && out.at(-1)?.v === ';') out.pop();
  return out;
}

/** The token after `k` is punctuation that starts where it ends (no space or comment between). */
function touching(lexed: SqlToken[], k: number): boolean {
  const next = lexed[k + 1];
  return next?.kind === 'punct' && next.start === (lexed[k] as SqlToken).end;
}

/** A number as decimal digits: `1_000` is 1000, `0x1F` 31. */
function decimal(text: string): string {
  const digits = text.replaceAll('_', '');
  return /^0[xXoObB]/.test(digits) ? BigInt(digits).toString() : digits;
}

export const isKw = (tok: Token | undefined, word: string): boolean => tok?.t === 'id' && !tok.quoted && tok.v === word;
export const isP = (tok: Token | undefined, p: string): boolean => tok?.t === 'p' && tok.v === p;

/** A cursor over tokens; every method returns undefined (or false) instead of throwing. */
export class Cursor {
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
