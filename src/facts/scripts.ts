// Numbers written in other scripts, read as the ASCII forms every reader knows: the decimal digits
// of any script (Arabic-Indic ١٢٩, Persian ۱۲۹, Devanagari १२९, Bengali, Thai, fullwidth １２９,
// mathematical 𝟏𝟐𝟗…), fullwidth signs and letters (＄, ％, ．, ＯＲＤ), the Arabic decimal and
// thousands separators (٫ ٬) and percent sign (٪). Unread, a claim written in them went unchecked.

/** A character to fold: a non-ASCII decimal digit, a fullwidth form, an Arabic separator or percent sign. */
const FOLDED = /[\u066a-\u066c\u3000\uff01-\uff5e]|(?![0-9])\p{Nd}/u;
const FOLDED_ALL = new RegExp(FOLDED.source, 'gu');

const ARABIC: Record<string, string> = { '\u066a': '%', '\u066b': '.', '\u066c': ',' };
const ND = /\p{Nd}/u;

/** A digit's value: Unicode lays every script's digits out as a run from 0 to 9, so it is its place in its run. */
const digitValues = new Map<number, number>();
function digitValue(cp: number): number {
  let v = digitValues.get(cp);
  if (v === undefined) {
    let start = cp;
    while (ND.test(String.fromCodePoint(start - 1))) start--;
    v = (cp - start) % 10;
    digitValues.set(cp, v);
  }
  return v;
}

function ascii(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (ch in ARABIC) return ARABIC[ch]!;
  if (cp === 0x3000) return ' ';
  if (cp >= 0xff01 && cp <= 0xff5e) return String.fromCharCode(cp - 0xfee0);
  return String(digitValue(cp));
}

/**
 * `text` with other scripts' digits and fullwidth forms as ASCII. `origin` (only when a folded
 * character took two UTF-16 units, an astral digit) maps each index of the folded text back to the
 * written one, so a mention's span stays the written text's.
 */
export function foldScripts(text: string): { text: string; origin?: Int32Array } {
  if (!FOLDED.test(text)) return { text };
  let wide = false;
  const folded = text.replace(FOLDED_ALL, (ch) => {
    if (ch.length > 1) wide = true;
    return ascii(ch);
  });
  if (!wide) return { text: folded };
  const origin = new Int32Array(folded.length + 1);
  let j = 0;
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const ch = text.slice(i, i + width);
    const out = FOLDED.test(ch) ? ascii(ch).length : width;
    for (let k = 0; k < out; k++) origin[j + k] = i;
    j += out;
    i += width;
  }
  origin[j] = text.length;
  return { text: folded, origin };
}
