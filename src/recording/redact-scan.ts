// The redactor's small readers of text (src/recording/redact.ts): where a JSON value in free text
// ends, within a budget; a name's words; a named pair's fields; loose JSON-string and URI decoding;
// a pattern made global.

/**
 * Where the JSON value that starts at `at` ends (a string, object or array), or undefined. Scans
 * at most `budget.left` characters, and takes them from it: a text of many values that never close
 * costs its length a few times, not its length per value.
 */
export function jsonValueEnd(text: string, at: number, budget: { left: number }): number | undefined {
  const open = text[at];
  if (open !== '"' && open !== '{' && open !== '[') return undefined;
  const stop = Math.min(text.length, at + budget.left);
  const end = open === '"' ? stringEnd(text, at, stop) : containerEnd(text, at, stop);
  budget.left -= (end ?? stop) - at;
  return end;
}

/** The index after the object or array that opens at `at`, scanning no further than `stop`. */
function containerEnd(text: string, at: number, stop: number): number | undefined {
  let depth = 0;
  for (let i = at; i < stop; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i, stop);
      if (end === undefined) return undefined;
      i = end - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}

/** The index after the JSON string that opens at `at`, or undefined when it does not close (before `stop`). */
export function stringEnd(text: string, at: number, stop = text.length): number | undefined {
  for (let i = at + 1; i < stop; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '"') return i + 1;
    else if (c === '\n') return undefined;
  }
  return undefined;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function toGlobal(pattern: string | RegExp): RegExp {
  if (typeof pattern === 'string') return new RegExp(pattern, 'g');
  return pattern.global ? pattern : new RegExp(pattern.source, `${pattern.flags}g`);
}

export function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** Sets an own property, even one named `__proto__` (JSON.parse makes those; plain assignment would not). */
export function setOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__')
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}

/** The fields of a named pair ({ key | name: string, value }), any case, or undefined. */
export function pairOf(
  input: Record<string, unknown>,
): { name: string; nameField: string; valueField: string } | undefined {
  let nameField: string | undefined;
  let valueField: string | undefined;
  for (const field of Object.keys(input)) {
    const lower = field.toLowerCase();
    if (lower === 'value') valueField = field;
    else if ((lower === 'key' || lower === 'name') && typeof input[field] === 'string') nameField = field;
  }
  if (nameField === undefined || valueField === undefined) return undefined;
  return { name: input[nameField] as string, nameField, valueField };
}

export function decodeJsonString(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

export function decodeUriLoose(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
