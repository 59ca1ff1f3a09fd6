// The tokens of SQL text: words, quoted identifiers, strings (dollar-quoted too), parameters,
// numbers and punctuation, with comments skipped. Enough to find the statement boundaries and the
// names a statement uses without executing or fully parsing it (row capture, the PGlite server's
// per-connection names).

export interface SqlToken {
  /** Lowercased word, or punctuation; strings and quoted identifiers have their own kinds. */
  v: string;
  kind: 'word' | 'ident' | 'string' | 'param' | 'punct' | 'number';
  start: number;
  end: number;
}

const WORD = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const NUMBER = /[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?/y;
const DOLLAR_TAG = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;
const PARAM = /\$[0-9]+/y;

/** Tokens of `sql`, or undefined when it cannot be read (an unterminated string or comment). */
export function tokenize(sql: string, limit = 1_000_000): SqlToken[] | undefined {
  if (sql.length > limit) return undefined;
  const out: SqlToken[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) {
      i++;
      continue;
    }
    const ch = sql[i] as string;
    if (ch === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (ch === '/' && sql[i + 1] === '*') {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (sql[j] === '/' && sql[j + 1] === '*') {
          depth++;
          j += 2;
        } else if (sql[j] === '*' && sql[j + 1] === '/') {
          depth--;
          j += 2;
        } else j++;
      }
      if (depth > 0) return undefined;
      i = j;
      continue;
    }
    if (ch === "'" || ((ch === 'e' || ch === 'E') && sql[i + 1] === "'")) {
      const escapes = ch !== "'";
      let j = escapes ? i + 2 : i + 1;
      for (;;) {
        if (j >= n) return undefined;
        if (escapes && sql[j] === '\\') {
          j += 2;
          continue;
        }
        if (sql[j] === "'") {
          if (sql[j + 1] === "'") {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      out.push({ v: sql.slice(i, j + 1), kind: 'string', start: i, end: j + 1 });
      i = j + 1;
      continue;
    }
    if (ch === '"') {
      let j = i + 1;
      let name = '';
      for (;;) {
        if (j >= n) return undefined;
        if (sql[j] === '"') {
          if (sql[j + 1] === '"') {
            name += '"';
            j += 2;
            continue;
          }
          break;
        }
        name += sql[j];
        j++;
      }
      out.push({ v: name, kind: 'ident', start: i, end: j + 1 });
      i = j + 1;
      continue;
    }
    if (ch === '$') {
      PARAM.lastIndex = i;
      const param = PARAM.exec(sql);
      if (param) {
        out.push({ v: param[0], kind: 'param', start: i, end: i + param[0].length });
        i += param[0].length;
        continue;
      }
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql);
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        if (close < 0) return undefined;
        out.push({ v: '$$', kind: 'string', start: i, end: close + tag[0].length });
        i = close + tag[0].length;
        continue;
      }
    }
    WORD.lastIndex = i;
    const word = WORD.exec(sql);
    if (word) {
      out.push({ v: word[0].toLowerCase(), kind: 'word', start: i, end: i + word[0].length });
      i += word[0].length;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(sql);
    if (num) {
      out.push({ v: num[0], kind: 'number', start: i, end: i + num[0].length });
      i += num[0].length;
      continue;
    }
    out.push({ v: ch, kind: 'punct', start: i, end: i + 1 });
    i++;
  }
  return out;
}
