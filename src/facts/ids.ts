// Which values in an action's arguments are identifiers worth grounding (keys like `order_id`,
// tokens mixing letters and digits, URL path segments, file-name stems), and the ids in free text.
import { mentionsIn } from './mentions.js';

/** A value an action uses, and the argument path it came from. */
export interface UsedValue {
  path: string;
  value: string;
}

const ID_KEY =
  /^(id|ids|uuid|guid|key|ref|reference|pnr|locator|code|number|email)$|(_|-)(id|ids|ref|code|number|key|uuid)$|[a-z](Id|Ids|Ref|Code|Number|Key|Uuid)$/i;
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}(:?\d{2})?)?)?$|^\d{1,2}:\d{2}(:\d{2})?$/;
/** A token mixing letters and digits, like FL123, bk_7f3a, 3f9c-…: the shape of an identifier. */
const ID_SHAPE = /^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-.:#/]{2,79}$/;

function isIdKey(key: string): boolean {
  return ID_KEY.test(key);
}

/** True when a string looks like an identifier (letters and digits mixed, no spaces, not a date). */
export function looksLikeId(text: string): boolean {
  return ID_SHAPE.test(text) && !DATE_LIKE.test(text) && !/^https?:/.test(text);
}

/** The identifier-like values used in a tool's arguments (URL path segments and query values included). */
export function usedValues(args: unknown): UsedValue[] {
  const out: UsedValue[] = [];
  walk(args, '$', '', out);
  const seen = new Set<string>();
  return out.filter((v) => {
    const key = `${v.path}=${v.value}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function walk(value: unknown, path: string, key: string, out: UsedValue[]): void {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) walk(item, `${path}[${i}]`, key, out);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walk(v, `${path}.${k}`, k, out);
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    if (isIdKey(key)) out.push({ path, value: String(value) });
  } else if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return;
    if (/^https?:\/\//.test(text)) {
      urlValues(text, path, out);
      return;
    }
    if (/\s/.test(text) || text.length > 200) return;
    if (text.includes('/') || /\.[A-Za-z][A-Za-z0-9]{0,4}$/.test(text)) {
      // A file path: the ids are in its segments (confirmations/BK-0001.md names BK-0001).
      for (const segment of text.split('/')) {
        const stem = segment.replace(/\.[A-Za-z][A-Za-z0-9]{0,4}$/, '');
        for (const id of idsInName(stem)) out.push({ path: `${path} (${text})`, value: id });
      }
      return;
    }
    if (text.length > 80) return;
    if (isIdKey(key) && !DATE_LIKE.test(text)) out.push({ path, value: text });
    else for (const id of idsInName(text)) out.push({ path, value: id });
  }
}

/** A word in a name (`refund`, `Receipt`): letters only, three or more, not an all-capital id prefix (`INV`). */
const NAME_WORD = /^(?!\p{Lu}+$)\p{L}{3,}$/u;

/**
 * The ids a name made of words and ids names: `refund-4412` names 4412, `receipt.INV-2031` names
 * INV-2031, `BK-0001` itself. The words are the name's, not the id's: an id the agent saw (#4412)
 * grounds the file it names after it. A number left alone is an id when it has three digits or
 * more (`notes-2` is a counter); a date is never one.
 */
function idsInName(name: string): string[] {
  if (!looksLikeId(name)) return [];
  const parts = name.split(/([-_.]+)/);
  if (!parts.some((p, i) => i % 2 === 0 && NAME_WORD.test(p))) return [name];
  const ids: string[] = [];
  let group = '';
  const close = () => {
    const id = group.replace(/^[-_.]+|[-_.]+$/g, '');
    if (looksLikeId(id) || (/^\d{3,}$/.test(id) && !DATE_LIKE.test(id))) ids.push(id);
    group = '';
  };
  for (const [i, part] of parts.entries()) {
    if (i % 2 === 0 && NAME_WORD.test(part)) close();
    else group += part;
  }
  close();
  return ids;
}

function urlValues(text: string, path: string, out: UsedValue[]): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return;
  }
  const segments = url.pathname.split('/').filter(Boolean).map(safeDecode);
  segments.forEach((segment, i) => {
    const previous = segments[i - 1] ?? '';
    // /bookings/42: a number after a collection name is an id; FL123 anywhere is.
    if (looksLikeId(segment) || (/^\d+$/.test(segment) && /[a-z]/i.test(previous))) {
      out.push({ path: `${path} (path /${segments.slice(0, i + 1).join('/')})`, value: segment });
    }
  });
  for (const [k, v] of url.searchParams) {
    if (looksLikeId(v) || (isIdKey(k) && v !== '' && !DATE_LIKE.test(v)))
      out.push({ path: `${path} (?${k})`, value: v });
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Identifier-like tokens in free text (for claims). */
export function idTokens(text: string): string[] {
  return [...new Set(mentionsIn(text).flatMap((m) => (m.kind === 'id' && looksLikeId(m.text) ? [m.text] : [])))];
}

/** Every string (and number, as text) inside a JSON value. */
export function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number') out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringsIn(v, out);
  return out;
}
