// The tokens of SQL text, read as Postgres's lexer reads them: words, quoted identifiers (U&"…"
// too), strings (E'…' with backslash escapes, U&'…' with unicode escapes and UESCAPE, $tag$…$tag$),
// parameters, numbers (with underscores, 0x/0o/0b) and punctuation, with comments (nested /* */)
// skipped. Enough to find the statement boundaries and the names a statement uses without
// executing or fully parsing it (row capture, the PGlite server's per-connection names), and to
// read a constant's value (src/recording/sql-cursor.ts, the catalog's expressions). The one SQL
// lexer: it imports only the recording layer's text check, so the recording layer may use it.
import { isWellFormedText } from '../recording/body.js';

export interface SqlToken {
  /** Lowercased word, or punctuation; strings and quoted identifiers have their own kinds. */
  v: string;
  kind: 'word' | 'ident' | 'string' | 'param' | 'punct' | 'number';
  start: number;
  end: number;
  /** A string's value: its quotes, doubled quotes and escapes undone. */
  text?: string;
}

const WORD = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const DIGITS = '[0-9](?:_?[0-9])*';
const NUMBER = new RegExp(
  '0[xX](?:_?[0-9A-Fa-f])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|' +
    // 1, 1.5, 1., .5 (not the 1 of `1..2`), each with an exponent or not
    `(?:${DIGITS}(?:\\.(?!\\.)(?:${DIGITS})?)?|(?<!\\.)\\.${DIGITS})(?:[eE][+-]?${DIGITS})?`,
  'y',
);
const DOLLAR_TAG = /\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;
const PARAM = /\$[0-9]+/y;
const SPACE = /[ \t\n\r\f\v]+/y;
/** What may follow UESCAPE: one character that is not a hex digit, +, a quote or a space. */
const UESCAPE_CHAR = /^[^0-9A-Fa-f+'"\s]$/;
const UESCAPE = /uescape(?![A-Za-z0-9_$\u0080-\uffff])/iy;

/** Tokens of `sql`, or undefined when it cannot be read (an unterminated string or comment, an escape Postgres refuses). */
export function tokenize(sql: string, limit = 1_000_000): SqlToken[] | undefined {
  if (sql.length > limit) return undefined;
  const out: SqlToken[] = [];
  let i = 0;
  const n = sql.length;
  /** Past a quoted run that starts at `from` (the quote), doubled quotes inside; -1 when unterminated. */
  const quoted = (from: number, quote: string, backslashes: boolean): number => {
    let j = from + 1;
    for (;;) {
      if (j >= n) return -1;
      if (backslashes && sql[j] === '\\') {
        j += 2;
        continue;
      }
      if (sql[j] === quote) {
        if (sql[j + 1] !== quote) return j + 1;
        j += 2;
        continue;
      }
      j++;
    }
  };
  /** Past the spaces and comments (-- to the line end, nested slash-star ones) from `from`; -1 when a comment is unterminated. */
  const gap = (from: number): number => {
    let j = from;
    for (;;) {
      SPACE.lastIndex = j;
      if (SPACE.test(sql)) j = SPACE.lastIndex;
      if (sql.startsWith('--', j)) {
        const nl = sql.indexOf('\n', j);
        j = nl < 0 ? n : nl + 1;
      } else if (sql.startsWith('/*', j)) {
        let depth = 1;
        j += 2;
        while (j < n && depth > 0) {
          if (sql[j] === '/' && sql[j + 1] === '*') {
            depth++;
            j += 2;
          } else if (sql[j] === '*' && sql[j + 1] === '/') {
            depth--;
            j += 2;
          } else j++;
        }
        if (depth > 0) return -1;
      } else return j;
    }
  };
  while (i < n) {
    const past = gap(i);
    if (past < 0) return undefined;
    if (past !== i) {
      i = past;
      continue;
    }
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (ch === "'" || ((ch === 'e' || ch === 'E') && next === "'")) {
      const escapes = ch !== "'";
      const from = escapes ? i + 1 : i;
      const end = quoted(from, "'", escapes);
      if (end < 0) return undefined;
      const body = sql.slice(from + 1, end - 1);
      const text = escapes ? escapedString(body) : body.replaceAll("''", "'");
      if (text === undefined) return undefined;
      out.push({ v: sql.slice(i, end), kind: 'string', start: i, end, text });
      i = end;
      continue;
    }
    if ((ch === 'u' || ch === 'U') && next === '&' && (sql[i + 2] === "'" || sql[i + 2] === '"')) {
      const quote = sql[i + 2] as string;
      let end = quoted(i + 2, quote, false);
      if (end < 0) return undefined;
      const body = sql.slice(i + 3, end - 1).replaceAll(quote + quote, quote);
      // U&'…' UESCAPE '!': the escape character is given after it.
      let marker = '\\';
      const at = gap(end);
      UESCAPE.lastIndex = at;
      if (at >= 0 && UESCAPE.test(sql)) {
        const opening = gap(UESCAPE.lastIndex);
        const given = opening < 0 ? undefined : /'([^']*(?:''[^']*)*)'/y;
        if (given === undefined) return undefined;
        given.lastIndex = opening;
        marker = given.exec(sql)?.[1]?.replaceAll("''", "'") ?? '';
        if (!UESCAPE_CHAR.test(marker)) return undefined;
        end = given.lastIndex;
      }
      const text = unicodeEscaped(body, marker);
      if (text === undefined) return undefined;
      out.push(
        quote === '"'
          ? { v: text, kind: 'ident', start: i, end }
          : { v: sql.slice(i, end), kind: 'string', start: i, end, text },
      );
      i = end;
      continue;
    }
    if (ch === '"') {
      const end = quoted(i, '"', false);
      if (end < 0) return undefined;
      out.push({ v: sql.slice(i + 1, end - 1).replaceAll('""', '"'), kind: 'ident', start: i, end });
      i = end;
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
        const end = close + tag[0].length;
        out.push({ v: '$$', kind: 'string', start: i, end, text: sql.slice(i + tag[0].length, close) });
        i = end;
        continue;
      }
    }
    WORD.lastIndex = i;
    const word = WORD.exec(sql);
    if (word) {
      // Postgres folds only A-Z: an unquoted Ä stays Ä.
      out.push({ v: word[0].replace(/[A-Z]+/g, (s) => s.toLowerCase()), kind: 'word', start: i, end: WORD.lastIndex });
      i = WORD.lastIndex;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(sql);
    if (num) {
      out.push({ v: num[0], kind: 'number', start: i, end: NUMBER.lastIndex });
      i = NUMBER.lastIndex;
      continue;
    }
    out.push({ v: ch, kind: 'punct', start: i, end: i + 1 });
    i++;
  }
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An E'…' string's body, its escapes undone; undefined for one Postgres refuses (a zero byte, bad UTF-8, a lone surrogate). */
function escapedString(body: string): string | undefined {
  // Octal and hex escapes are bytes, which together must be UTF-8.
  const bytes: number[] = [];
  const flush = (): string | undefined => {
    if (bytes.length === 0) return '';
    try {
      return utf8.decode(Uint8Array.from(bytes.splice(0)));
    } catch {
      return undefined;
    }
  };
  let out = '';
  let i = 0;
  while (i < body.length) {
    const ch = body[i] as string;
    if (ch === "'") {
      // '' inside: one quote.
      i += 2;
      out += "'";
      continue;
    }
    if (ch !== '\\' || i + 1 >= body.length) {
      const text = flush();
      if (text === undefined) return undefined;
      out += text + ch;
      i++;
      continue;
    }
    const e = body[i + 1] as string;
    const octal = /^[0-7]{1,3}/.exec(body.slice(i + 1, i + 4));
    const hex = e === 'x' ? /^[0-9A-Fa-f]{1,2}/.exec(body.slice(i + 2, i + 4)) : null;
    if (octal || hex) {
      const byte = octal ? Number.parseInt(octal[0], 8) & 0xff : Number.parseInt((hex as RegExpExecArray)[0], 16);
      if (byte === 0) return undefined;
      bytes.push(byte);
      i += 1 + (octal ? octal[0].length : 1 + (hex as RegExpExecArray)[0].length);
      continue;
    }
    const text = flush();
    if (text === undefined) return undefined;
    out += text;
    if (e === 'u' || e === 'U') {
      const width = e === 'u' ? 4 : 8;
      const digits = body.slice(i + 2, i + 2 + width);
      if (!new RegExp(`^[0-9A-Fa-f]{${width}}$`).test(digits)) return undefined;
      out += String.fromCharCode(...codeUnits(Number.parseInt(digits, 16)));
      i += 2 + width;
      continue;
    }
    out += SIMPLE_ESCAPES[e] ?? e;
    i += 2;
  }
  const text = flush();
  return text === undefined || !isWellFormedText(out + text) ? undefined : out + text;
}

/** A U&'…' or U&"…" body (doubled quotes already undone), its escapes (`\XXXX`, `\+XXXXXX`, `\\`) undone. */
function unicodeEscaped(body: string, marker: string): string | undefined {
  let out = '';
  let i = 0;
  while (i < body.length) {
    const ch = body[i] as string;
    if (ch !== marker) {
      out += ch;
      i++;
      continue;
    }
    if (body[i + 1] === marker) {
      out += marker;
      i += 2;
      continue;
    }
    const six = body[i + 1] === '+';
    const digits = body.slice(i + (six ? 2 : 1), i + (six ? 8 : 5));
    if (!(six ? /^[0-9A-Fa-f]{6}$/ : /^[0-9A-Fa-f]{4}$/).test(digits)) return undefined;
    out += String.fromCharCode(...codeUnits(Number.parseInt(digits, 16)));
    i += six ? 8 : 5;
  }
  return isWellFormedText(out) ? out : undefined;
}

/** A code point as UTF-16 units; a surrogate stays one unit, for a pair written as two escapes. */
function codeUnits(cp: number): number[] {
  if (cp === 0 || cp > 0x10ffff) return [0xdc00]; // refused: a lone surrogate fails isWellFormedText
  if (cp < 0x10000) return [cp];
  const v = cp - 0x10000;
  return [0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff)];
}
