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

// The fast way: V8's own JSON.stringify, handed each object with its keys in sorted order (a
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

function toPlain(value: object): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function' ? toJSON.call(value) : value;
}

function compact(value: unknown): string | undefined {
  const s = scalar(value);
  if (s !== null) return s;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += compact(value[i]) ?? 'null';
    }
    return `${out}]`;
  }
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
