// The o200k pre-tokenizer (gpt-tokenizer's O200K_TOKEN_SPLIT_REGEX) for ASCII text, as a scanner:
//   [^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+('s|'d|'m|'t|'ll|'ve|'re)?   (1) word, lowercase tail
//   [^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*('s|…)?                        (2) word, uppercase
//   \p{N}{1,3}                                                            (3) digits
//    ?[^\s\p{L}\p{N}]+[\r\n/]*                                            (4) punctuation
//   \s*[\r\n]+  |  \s+(?!\S)  |  \s+                                      (5–7) whitespace
// On ASCII, \p{L} is [A-Za-z], \p{Lu} [A-Z], \p{Ll} [a-z], \p{N} [0-9], \p{Lt}/\p{Lm}/\p{Lo}/\p{M}
// are empty and \s is [\t\n\v\f\r ]; the scanner takes the alternatives in order with the regex's
// greedy/backtracking outcome. The tests check it piece for piece against the regex.

const UPPER = 1;
const LOWER = 2;
const DIGIT = 4;
const SPACE = 8; // \s
const NEWLINE = 16; // \r \n
const PUNCT = 32; // [^\s\p{L}\p{N}]
const LETTER = UPPER | LOWER;
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (c >= 65 && c <= 90) CLASS[c] = UPPER;
  else if (c >= 97 && c <= 122) CLASS[c] = LOWER;
  else if (c >= 48 && c <= 57) CLASS[c] = DIGIT;
  else if (c === 10 || c === 13) CLASS[c] = SPACE | NEWLINE;
  else if ((c >= 9 && c <= 12) || c === 32) CLASS[c] = SPACE;
  else CLASS[c] = PUNCT;
}

/** True when every character of `text` is ASCII (the scanner's domain). */
export function isAsciiText(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
}

/** The class of the character at `i`; 0 past the end. */
const cls = (text: string, i: number): number => (i < text.length ? (CLASS[text.charCodeAt(i)] as number) : 0);

function contraction(text: string, i: number): number {
  if (text.charCodeAt(i) !== 39) return i; // '
  const a = text.charCodeAt(i + 1) | 32; // lower-cases a letter (NaN | 32 = 32 past the end)
  if (a === 115 || a === 100 || a === 109 || a === 116) return i + 2; // s d m t
  const b = text.charCodeAt(i + 2) | 32;
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return i + 3; // ll ve re
  return i;
}

/** End of the pre-tokenizer piece that starts at `p` (< text.length) in ASCII `text`. */
export function asciiPieceEnd(text: string, p: number): number {
  const c = cls(text, p);
  // (1) and (2): a word, after one prefix character [^\r\n\p{L}\p{N}] when there is one.
  const prefixed = (c & (PUNCT | SPACE)) !== 0 && (c & NEWLINE) === 0;
  if (prefixed || (c & LETTER) !== 0) {
    const start = prefixed ? p + 1 : p;
    let i = start;
    while ((cls(text, i) & UPPER) !== 0) i++;
    let j = i;
    while ((cls(text, j) & LOWER) !== 0) j++;
    if (j > i) return contraction(text, j); // (1)
    if (i > start) return contraction(text, i); // (2): an uppercase run with no lowercase after it
  }
  // (3)
  if ((c & DIGIT) !== 0) {
    let i = p + 1;
    while (i < p + 3 && (cls(text, i) & DIGIT) !== 0) i++;
    return i;
  }
  // (4): an optional space, punctuation, then any CR, LF and slashes.
  const punctStart = text.charCodeAt(p) === 32 && (cls(text, p + 1) & PUNCT) !== 0 ? p + 1 : p;
  if ((cls(text, punctStart) & PUNCT) !== 0) {
    let i = punctStart + 1;
    while ((cls(text, i) & PUNCT) !== 0) i++;
    while ((cls(text, i) & NEWLINE) !== 0 || text.charCodeAt(i) === 47) i++;
    return i;
  }
  // (5)–(7): c is whitespace; W = the whitespace run [p, w).
  let w = p + 1;
  while ((cls(text, w) & SPACE) !== 0) w++;
  for (let k = w - 1; k >= p; k--) {
    if ((cls(text, k) & NEWLINE) !== 0) return k + 1; // (5): up to the last CR/LF of the run
  }
  if (w === text.length) return w; // (6) at the end of the text
  if (w - 1 > p) return w - 1; // (6): the last space goes with the next piece
  return w; // (7)
}
