// Weekdays written without a date, read against the run's day: `on Friday`, `Friday's flight`, `am
// Freitag`, `vendredi`, `el viernes`, `venerdì prossimo`, `na sexta-feira`, `op vrijdag`, `下周五`,
// `金曜日`, `금요일`. A bare weekday is the coming one (said on that day: today or a week on, either);
// in a sentence in the past tense also the last one. Not read — no verdict, never a false fail — where
// it is no one day: a habit (`every Friday`, `le vendredi`, `los viernes`), a range (`Monday to
// Friday`), a name (`Black Friday`, `Sunday Times`, `Viernes Santo`), a weekday beside a date (the
// date is read; `Friday, Dec 4`, `vendredi 4 décembre`, `2026-12-04 (Friday)`). English `next`,
// `this`, `last` before a weekday are relative-dates.ts.

import { isMonthWord } from './dates-abroad.js';
import { type Made, type Pass, pass } from './readings.js';
import { type RunDay, relative, type Targets, week, weekdayDates } from './relative-dates.js';
import { foldText, WEEKDAY_NAME, WEEKDAY_NAMES } from './written.js';

type Which = 'next' | 'this' | 'last' | 'coming';

const DAY_OF = new Map(WEEKDAY_NAMES.flatMap((names, w) => names.split(' ').map((n) => [foldText(n), w] as const)));
const NAME = WEEKDAY_NAME;
/** The names their languages write with a capital (English, German): after a sentence's first word they are still weekdays. */
const CAPITALISED = new Set(
  WEEKDAY_NAMES.flatMap((names) => names.split(' ').slice(0, 2))
    .concat('sonnabend')
    .map((n) => foldText(n)),
);

/** Words before a weekday that say which (`nächsten Freitag`, `ce vendredi`, `el próximo viernes`, `vorige vrijdag`). */
const BEFORE = new Map<string, Which>(
  Object.entries({
    next: 'nachsten nachster nachstem proximo proxima prossimo prossima volgende',
    coming: 'coming kommenden kommender kommendem aanstaande komende',
    this: 'diesen dieser diesem ce este esta questo questa nesta neste deze',
    last: 'letzten letzter letztem vergangenen vergangener vorigen voriger ultimo ultima vorige afgelopen past',
  }).flatMap(([which, words]) => words.split(' ').map((w) => [w, which as Which] as const)),
);
/** Words after it that say which (`vendredi prochain`, `viernes pasado`, `venerdì scorso`, `sexta-feira passada`). */
const AFTER = new Map<string, Which>(
  Object.entries({
    next: 'prochain prochaine prossimo prossima proximo proxima',
    last: 'dernier derniere passe pasado pasada scorso scorsa passado passada',
  }).flatMap(([which, words]) => words.split(' ').map((w) => [w, which as Which] as const)),
);

/** Word edges for any script's letters. */
const B0 = '(?<![\\p{L}\\p{N}_-])';
const B1 = '(?![\\p{L}\\p{N}_]|-\\p{L})';

/** A weekday's name (and a possessive `'s`); the words before and after it are read by `latin`. */
const LATIN = new RegExp(`${B0}(${NAME})${B1}(?:['’]s)?`, 'giu');
const LEAD = /(?<![\p{L}'’])(\p{L}+)\s{1,3}$/u;
const TAIL = /^\s{1,3}(que\s+viene|que\s+vem|\p{L}+)/u;

/** A word before it that makes it no one day: a habit (`every`, `jeden`, `chaque`, `le`, `los`, `di`), a named day (`Black Friday`). */
const NOT_ONE_DAY = new Set(
  'every each jeden jede jedem chaque le les cada los todos todas ogni il di elke iedere alle immer always black good cyber easter ash holy palm maundy super giving shrove fat bloody whit pentecost passion'.split(
    ' ',
  ),
);
/** Words after it that name a day (`Mardi gras`, `vendredi saint`, `Viernes Santo`). */
const NAMED_AFTER = new Set('gras saint sainte santo santa'.split(' '));
/** Capitalised words that may stand before a weekday (prepositions, which-words); any other makes it a name. */
const MAY_LEAD = new Set(
  'on by until till before after from since due this next last coming am bis ab seit vom zum zu fur für le ce des depuis jusqu pour avant apres el este esta hasta desde para antes despues il questo entro da per prima dopo na no nesta neste ate até depois op tot vanaf voor deze sinds tegen'.split(
    ' ',
  ),
);

/** A range's joiner (`Monday to Friday`, `lundi au vendredi`, `de lunes a viernes`, `Montag–Freitag`). */
const JOIN = `(?:[-–—~/]|to|through|thru|till|until|bis|au|à|a|al|alla|t/m|tot|até|hasta)`;
const RANGE_AFTER = new RegExp(`^\\s{0,3}${JOIN}\\s{0,3}(?:${NAME})(?![\\p{L}])`, 'iu');
const RANGE_BEFORE = new RegExp(`(?<![\\p{L}])(?:${NAME})\\s{0,3}${JOIN}\\s{0,3}$`, 'iu');
/** A clock time after it (`Friday at 2pm`, `Freitag um 14 Uhr`, `vendredi à 14h`): the weekday is still read. */
const TIME_AFTER =
  /^[\s,]{0,3}(?:(?:at|um|à|a\s+las?|alle|às|om|@)\s{1,3})?\d{1,2}(?::\d\d|\s?[ap]\.?m\b|\s?h\b|h\d\d|\s?Uhr|\s?uur)/i;
/** A date after it (`Friday 3/4`, `Freitag, den 4. Dezember`, `le vendredi 4`, `Friday the 13th`, `Friday (Dec 4)`). */
const DATE_AFTER = /^[\s,]{0,3}(?:\(\s?)?(?:(?:the|den|der|le|el|il|o|de|op)\s{1,3})?(?:\d|(\p{L}+))/iu;
/** A date before it (`Dec 4 (Friday)`, `2026-12-04, Friday`, `4 décembre, vendredi`): a number or a month's name. */
const DATE_BEFORE = /(?:(?<![:\d])\d{1,4}|(\p{L}+))\.?[\s,()]{0,4}$/u;

/**
 * A sentence in the past tense: `was`, `had`, `did`, a verb in -ed (not after `is`/`are`/`be`);
 * `war`, `hatte`, `ge…t`; `était`, `a réservé`; `fue`, `salió`; `era`, `è partito`; `foi`, `chegou`;
 * `werd`, `geboekt`; `了`, `ました`, `었`.
 */
const PAST = new RegExp(
  [
    '(?<![\\p{L}])(?:was|were|had|did|went|flew|left|came|got|ago|yesterday|war|waren|hatte|hatten|wurde|wurden|gestern|était|étaient|avait|avaient|hier|fue|fueron|había|habían|ayer|fu|furono|ieri|foi|foram|ontem|werd|gisteren)(?![\\p{L}])',
    "(?<![\\p{L}])(?<!(?:is|are|be|been|being|am|'s|'re)\\s{1,3})\\p{L}{2,}ed(?![\\p{L}])",
    '(?<![\\p{L}])ge\\p{L}{3,}(?:t|d|en)(?![\\p{L}])',
    '(?<![\\p{L}])(?:ai|as|a|avons|avez|ont)\\s{1,3}\\p{L}{2,}(?:é|ée|és|i|is|u|it)(?![\\p{L}])',
    '(?<![\\p{L}])(?:he|has|ha|hemos|han|ho|hai|abbiamo|hanno|è|sono|siamo)\\s{1,3}\\p{L}{2,}(?:ado|ido|ato|uto|ito|ata|uta|ita)(?![\\p{L}])',
    '(?<![\\p{L}])\\p{L}{3,}(?:ó|aron|ieron|ou|aram|iu)(?![\\p{L}])',
    '了|過|过|昨|ました|でした|った|었|았|였',
  ].join('|'),
  'iu',
);
const SENTENCE_END = /[.!?;\n。！？]/;

/** The clause around a match (at most 120 characters either side, to the sentence's ends): linear in the text. */
function clauseAround(text: string, start: number, end: number): string {
  const before = text.slice(Math.max(0, start - 120), start);
  const after = text.slice(end, end + 120);
  let from = before.length;
  while (from > 0 && !SENTENCE_END.test(before[from - 1]!)) from--;
  const to = after.search(SENTENCE_END);
  return `${before.slice(from)} ${to < 0 ? after : after.slice(0, to)}`;
}

/** The dates a weekday names: which one the words say, or the coming one (and, in the past tense, the last one). */
function targetsOf(which: Which | undefined, w: number, past: boolean): Targets {
  if (which !== undefined) return weekdayDates(which, w);
  const coming = weekdayDates('coming', w);
  if (!past) return coming;
  const last = weekdayDates('last', w);
  return (t) => [...coming(t), last(t)[0]!];
}

/** A word written as a name is (`Black`, `Plácido`), not a code in capitals (`DEN`, `SFO`). */
function isCapitalised(word: string): boolean {
  return /^\p{Lu}\p{Ll}/u.test(word);
}

/** A Latin-script weekday: its dates, or undefined where it is no one day. */
function latin(m: RegExpExecArray, run: RunDay | undefined): Made | undefined {
  const text = m.input;
  const w = DAY_OF.get(foldText(m[1]!));
  if (w === undefined) return undefined;
  const end = m.index + m[0].length;
  const before = text.slice(Math.max(0, m.index - 32), m.index);
  const after = text.slice(end, end + 32);
  const led = LEAD.exec(before);
  const lead = led?.[1];
  const leadWord = lead === undefined ? undefined : foldText(lead);
  if (led !== null && lead !== undefined && leadWord !== undefined) {
    if (NOT_ONE_DAY.has(leadWord) || isMonthWord(lead)) return undefined;
    // A capitalised word before it makes it a name (`Super Bowl Sunday`, `Plácido Domingo`), unless it says
    // when or starts the sentence (`Departs Friday`) before a weekday its language writes so (`Freitag`, not `Domingo`).
    if (isCapitalised(lead) && !MAY_LEAD.has(leadWord) && !BEFORE.has(leadWord)) {
      const prefix = before.slice(0, led.index);
      const starts = /[.!?:;\n]\s*$/.test(prefix) || (prefix.trim() === '' && m.index === before.length);
      if (!starts || !(isCapitalised(m[1]!) && CAPITALISED.has(foldText(m[1]!)))) return undefined;
    }
  }
  if (RANGE_AFTER.test(after) || RANGE_BEFORE.test(before)) return undefined;
  const dateBefore = DATE_BEFORE.exec(before);
  if (dateBefore !== null && (dateBefore[1] === undefined || isMonthWord(dateBefore[1]))) return undefined;
  if (!TIME_AFTER.test(after)) {
    const dateAfter = DATE_AFTER.exec(after);
    if (dateAfter !== null && (dateAfter[1] === undefined || isMonthWord(dateAfter[1]))) return undefined;
  }
  const tail = TAIL.exec(after)?.[1];
  const tailWord = tail === undefined ? undefined : foldText(tail).replace(/\s+/g, ' ');
  const said = tailWord === undefined ? undefined : tailWord.startsWith('que ') ? 'next' : AFTER.get(tailWord);
  if (tailWord !== undefined && NAMED_AFTER.has(tailWord)) return undefined;
  // A capitalised word after it makes it a name (`Sunday Times`, `Friday Harbor`, `Viernes Santo`).
  if (tail !== undefined && said === undefined && /^ \p{Lu}/u.test(after)) return undefined;
  const which = (leadWord === undefined ? undefined : BEFORE.get(leadWord)) ?? said;
  const past = which === undefined && PAST.test(clauseAround(text, m.index, end));
  return relative(run, m[0], targetsOf(which, w, past));
}

/** Chinese, Japanese and Korean: `周五`, `星期五`, `下周五`, `金曜日`, `来週の金曜日`, `금요일`, `다음 주 금요일`. */
const CJK =
  /(下个?|上个?|这个?|這個?|本|来週の?|先週の?|今週の?|다음\s?주\s?|지난\s?주\s?|이번\s?주\s?)?(?:(?:星期|礼拜|禮拜)([一二三四五六日天])|[周週]([一二三四五六日])|([日月火水木金土])曜日?|([일월화수목금토])요일)/gu;
const CJK_DAY = new Map(
  [...'日一二三四五六'].map((c, i) => [c, i] as const).concat([...'月火水木金土'].map((c, i) => [c, i + 1] as const)),
);
const CJK_NAME = '(?:星期|礼拜|禮拜|[周週])[一二三四五六日天]|[日月火水木金土]曜|[일월화수목금토]요일';
const CJK_RANGE_AFTER = new RegExp(`^\\s?(?:[~〜\\-–—至到]|から|부터)\\s?(?:${CJK_NAME})`, 'u');
const CJK_RANGE_BEFORE = new RegExp(`(?:${CJK_NAME})日?\\s?(?:[~〜\\-–—至到]|から|부터)\\s?$`, 'u');
const KO_DAY = new Map([...'일월화수목금토'].map((c, i) => [c, i] as const));
/** `下周`, `来週`, `다음 주`: next week (1), last week (−1), this week (0) — a calendar week, either start. */
const CJK_WEEK: Array<[RegExp, number]> = [
  [/^(?:下|来週|다음)/u, 1],
  [/^(?:上|先週|지난)/u, -1],
  [/^(?:这|這|本|今週|이번)/u, 0],
];

/** Weekday `w` of the week `n` weeks from today's (starting Monday or Sunday). */
function ofWeek(n: number, w: number): Targets {
  return (t) => week(n)(t).filter((d) => new Date(`${d}T00:00:00Z`).getUTCDay() === w);
}

function cjk(m: RegExpExecArray, run: RunDay | undefined): Made | undefined {
  const [, which, a, b, c, k] = m;
  const w = k !== undefined ? KO_DAY.get(k) : a === '天' ? 0 : CJK_DAY.get((a ?? b ?? c)!);
  if (w === undefined) return undefined;
  const text = m.input;
  const before = text.slice(Math.max(0, m.index - 8), m.index);
  const after = text.slice(m.index + m[0].length, m.index + m[0].length + 12);
  // A habit (`每周五`, `毎週`, `매주`), a count (`一周一次`), a range (`周一至周五`, `月曜日から`), a date beside it (`12月4日（金曜日）`).
  if (which === undefined && /(?:每|毎|매주?|[一二两兩三四五六七八九十几幾数數\d])\s?$/u.test(before)) return undefined;
  if (CJK_RANGE_AFTER.test(after) || CJK_RANGE_BEFORE.test(before)) return undefined;
  if (/[日号號일\d]\s?[（(]?\s?$/u.test(before)) return undefined;
  if (/^\s?[（(]?\s?\d/u.test(after) && !/^\s?\d{1,2}\s?(?::\d\d|[時时点點시])/u.test(after)) return undefined;
  const n = which === undefined ? undefined : CJK_WEEK.find(([re]) => re.test(which))?.[1];
  if (n !== undefined) return relative(run, m[0], ofWeek(n, w));
  const past = PAST.test(clauseAround(text, m.index, m.index + m[0].length));
  return relative(run, m[0], targetsOf(undefined, w, past));
}

/** Every weekday's name, for one scan that skips a text with none. */
export const WEEKDAY_HINT = new RegExp(`${NAME}|星期|[周週礼禮][一二三四五六日天拜]|曜|요일`, 'iu');

export const WEEKDAY_PASSES: Pass[] = [
  pass(LATIN, (m, _c, run) => latin(m, run), false),
  pass(CJK, (m, _c, run) => cjk(m, run), false),
];
