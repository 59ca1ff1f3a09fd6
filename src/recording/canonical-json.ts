// Canonical JSON: object keys sorted by code unit, no insignificant whitespace, so the same
// value always gives the same bytes (byte-stable recordings, small git diffs).

/**
 * Serialises `value` like JSON.stringify, with object keys sorted.
 * `undefined`, functions and symbols are dropped from objects (and become null in arrays);
 * non-finite numbers become null; -0 becomes 0; `toJSON()` is honoured.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) === '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  try {
    return plain(value) ?? 'null';
  } catch {
    // Not plain data (a Date, a bigint, a cycle, nesting past the stack): the ways below say what it is.
  }
  try {
    return JSON.stringify(value, sortedKeys) ?? 'null';
  } catch (error) {
    if (error !== INTEGER_KEYS) throw error;
    return compact(value) ?? 'null';
  }
}

/** Canonical JSON indented by two spaces, for human-read files (manifest, snapshots). */
export function canonicalJsonPretty(value: unknown): string {
  try {
    return JSON.stringify(value, sortedKeys, 2) ?? 'null';
  } catch (error) {
    if (error !== INTEGER_KEYS) throw error;
    return pretty(value, '') ?? 'null';
  }
}

// The fast way, for plain data (what JSON.parse and object literals make: the writer's events): a
// walk that sorts the keys it meets and hands V8's JSON.stringify each string, and each object of
// sorted keys whose values are all strings, booleans and numbers (a header map, a Body) whole. In
// the replay's writer, whose envelopes and payloads are built in no sorted order, it took half the
// time of the replacer below (11 against 22 ms for a 1,000-step recording's 4,084 events). Anything
// else (toJSON, a class instance, a bigint) is NOT_PLAIN, or throws, and takes the ways below.
const NOT_PLAIN = new Error('canonicalJson: not plain data');
const keyPrefixes = new Map<string, string>();

function plain(value: unknown): string | undefined {
  const s = scalar(value);
  if (s !== null) return s;
  if ((value as { toJSON?: unknown }).toJSON !== undefined) throw NOT_PLAIN;
  if (Array.isArray(value)) return arrayJson(value, plain);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let flat = true;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && (keys[i - 1] as string) > (keys[i] as string)) {
      keys.sort();
      flat = false;
      break;
    }
    const t = typeof record[keys[i] as string];
    if (t !== 'string' && t !== 'number' && t !== 'boolean') flat = false;
  }
  // Keys in sorted order, as JSON.stringify takes them (Object.keys' order), and scalar values.
  if (flat) return JSON.stringify(record);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const v = plain(record[key]);
    if (v === undefined) continue;
    let prefix = keyPrefixes.get(key);
    if (prefix === undefined) {
      prefix = `${JSON.stringify(key)}:`;
      if (keyPrefixes.size < 4096) keyPrefixes.set(key, prefix);
    }
    out += first ? prefix : `,${prefix}`;
    out += v;
    first = false;
  }
  return `${out}}`;
}

// The way for the rest: V8's own JSON.stringify, handed each object with its keys in sorted order (a
// copy only when they are not already). An object whose keys need sorting and include an array
// index ("10", "9") cannot be handed over that way, as JS enumerates index keys first in numeric
// order: the whole value then takes the slow way below (same output).
const INTEGER_KEYS = new Error('canonicalJson: index-like keys');
const INDEX_KEY = /^(?:0|[1-9]\d*)$/;

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    if (typeof value === 'bigint')
      throw new TypeError('canonicalJson: a bigint has no JSON form; convert it to a string first');
    return value;
  }
  const keys = Object.keys(value);
  let sorted = true;
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) {
      sorted = false;
      break;
    }
  }
  if (sorted) return value;
  keys.sort();
  // No prototype: a key named `__proto__` is then a key like any other, not the copy's prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const key of keys) {
    if (INDEX_KEY.test(key)) throw INTEGER_KEYS;
    copy[key] = (value as Record<string, unknown>)[key];
  }
  return copy;
}

function scalar(value: unknown): string | undefined | null {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? '0' : String(value)) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw new TypeError('canonicalJson: a bigint has no JSON form; convert it to a string first');
    default:
      return value === null ? 'null' : null; // null: an object or array to recurse into
  }
}

/** An array's items, each as `item` gives it, a dropped one (undefined, a function) as null. */
function arrayJson(items: unknown[], item: (value: unknown) => string | undefined): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    out += item(items[i]) ?? 'null';
  }
  return `${out}]`;
}

function toPlain(value: object): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function' ? toJSON.call(value) : value;
}

function compact(value: unknown): string | undefined {
  const s = scalar(value);
  if (s !== null) return s;
  if (Array.isArray(value)) return arrayJson(value, compact);
  const plain = toPlain(value as object);
  if (plain !== value) return compact(plain);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const v = compact(record[key]);
    if (v === undefined) continue;
    out += first ? '' : ',';
    out += `${JSON.stringify(key)}:${v}`;
    first = false;
  }
  return `${out}}`;
}

function pretty(value: unknown, indent: string): string | undefined {
  const s = scalar(value);
  if (s !== null) return s;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((item) => `${inner}${pretty(item, inner) ?? 'null'}`);
    return `[\n${items.join(',\n')}\n${indent}]`;
  }
  const plain = toPlain(value as object);
  if (plain !== value) return pretty(plain, indent);
  const record = value as Record<string, unknown>;
  const items: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const v = pretty(record[key], inner);
    if (v !== undefined) items.push(`${inner}${JSON.stringify(key)}: ${v}`);
  }
  return items.length === 0 ? '{}' : `{\n${items.join(',\n')}\n${indent}}`;
}
