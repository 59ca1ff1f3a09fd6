// SQL text as tokens (identifiers, strings, numbers, punctuation) and a cursor over them that never
// throws: what src/recording/catalog-expr.ts and db-description.ts read the catalog's and an old
// recording's SQL with, never running it.

export type Token =
  | { t: 'id'; v: string; quoted: boolean }
  | { t: 'str'; v: string }
  | { t: 'num'; v: string }
  | { t: 'p'; v: string };

const MAX_SQL = 100_000;
const OPERATOR_CHARS = '+-*/<>=~!@#%^&|`?';

/** Splits SQL text into identifiers, strings, numbers and punctuation; undefined for anything else. */
export function tokenize(sql: string): Token[] | undefined {
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
