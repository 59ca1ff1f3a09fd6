// Numbers written in words: `twelve`, `twenty-five`, `one hundred twenty`, `a dozen`, `two dozen`,
// `one point two million`, `twenty-first`; and a sign written as a word (`minus 12`, `negative 3%`).

export const WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
/** Ordinals, read as their number: `twenty-first` is 21, `tenth` 10 (a lone `first` or `second` is not read). */
const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
  thirteenth: 13,
  fourteenth: 14,
  fifteenth: 15,
  sixteenth: 16,
  seventeenth: 17,
  eighteenth: 18,
  nineteenth: 19,
  twentieth: 20,
  thirtieth: 30,
  fortieth: 40,
  fiftieth: 50,
  sixtieth: 60,
  seventieth: 70,
  eightieth: 80,
  ninetieth: 90,
  hundredth: 100,
  thousandth: 1000,
};
const SCALE_WORDS: Record<string, number> = { thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };
const ALL = [...Object.keys(WORDS), ...Object.keys(ORDINALS), 'hundred', 'dozen', ...Object.keys(SCALE_WORDS)];
/** One number word (longest first, so `seventeen` is not `seven`). */
export const NUMBER_WORD = `(?:${ALL.sort((a, b) => b.length - a.length).join('|')})`;
/**
 * A run of number words: `twenty-five`, `one hundred and twenty`, `one point two million`. A
 * dozen after `half a` is not read (`half a dozen` is 6, not 12).
 */
export const NUMBER_WORDS = `(?<!\\bhalf an?\\s{1,3})\\b${NUMBER_WORD}(?:(?:[\\s-]+(?:and\\s+)?|\\s+point\\s+)${NUMBER_WORD})*\\b`;
/**
 * At most eight number words, for a pattern that may fail after them (`… dollars and … cents`):
 * bounded, so a hostile run of words costs each start a few steps, not the rest of the run.
 */
export const FEW_NUMBER_WORDS = `\\b${NUMBER_WORD}(?:[\\s-]+(?:and\\s+)?${NUMBER_WORD}){0,7}\\b`;

/**
 * `twenty-five` -> 25, `one hundred twenty` -> 120, `two dozen` -> 24, `one point two million`
 * -> 1.2e6 (with the tolerance its last written digit gives: 0.05e6), `twenty-first` -> 21.
 * Undefined for what is not one number: digits after `point` that are not single digits, an
 * ordinal before another word, a lone small ordinal (`first`, `second`: words, not facts).
 */
export function wordsValue(text: string): { value: number; tolerance: number } | undefined {
  const list = text
    .toLowerCase()
    .split(/[\s-]+/)
    .filter((w) => w !== '' && w !== 'and');
  let total = 0;
  let current = 0;
  let place = 0;
  let tolerance = 0;
  for (const [i, word] of list.entries()) {
    if (word === 'point') {
      if (place !== 0) return undefined;
      place = 0.1;
    } else if (word in ORDINALS) {
      // Last, and after a ten or a scale only: `twenty-first`, `one hundred and first`; `one second` is a duration.
      const before = list[i - 1];
      if (i !== list.length - 1 || place !== 0 || (list.length === 1 && ORDINALS[word]! < 10)) return undefined;
      if (before !== undefined && before in WORDS && WORDS[before]! < 20) return undefined;
      const n = ORDINALS[word]!;
      current = n >= 100 ? (current || 1) * n : current + n;
    } else if (word in WORDS) {
      if (place !== 0) {
        if (WORDS[word]! > 9) return undefined;
        current += WORDS[word]! * place;
        tolerance = place / 2;
        place /= 10;
      } else current += WORDS[word]!;
    } else if (word === 'hundred' || word === 'dozen') {
      if (place !== 0) return undefined;
      current = (current || 1) * (word === 'hundred' ? 100 : 12);
    } else if (word in SCALE_WORDS) {
      const scale = SCALE_WORDS[word]!;
      total += (current || 1) * scale;
      tolerance *= scale;
      current = 0;
      place = 0;
    } else return undefined;
  }
  if (place === 0.1) return undefined;
  return { value: total + current, tolerance };
}
