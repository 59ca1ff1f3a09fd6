// Small JSON helpers every module shares: reading untrusted JSON shapes and parsing text that may
// or may not be JSON (bodies, tool arguments). Canonical JSON text is in canonical-json.ts.

/**
 * JSON nested deeper than this is refused: every engine walks values recursively, and a value a
 * real agent exchanges is nowhere near this deep. A writer keeps what is deeper as text (capDepth).
 */
export const MAX_JSON_DEPTH = 200;

/** A plain object (not null, not an array): a JSON object read from untrusted data. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is an array, else an empty one. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Parses text that holds a JSON object or array (a body, tool arguments); anything else — empty,
 * a scalar, not JSON — is `{ ok: false }`.
 * @example parseJson('{"a":1}') // { ok: true, value: { a: 1 } }
 */
export function parseJson(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (text === undefined || text.length === 0) return { ok: false };
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return { ok: false };
  try {
    return { ok: true, value: parseUntrusted(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * JSON.parse for text from outside (a body, a stream's event, a message): what nests deeper than
 * MAX_JSON_DEPTH comes back as its JSON text (capDepth), so no recursive walk over the value —
 * matching, redaction, canonical JSON — overflows the stack on it. Throws as JSON.parse does.
 */
export function parseUntrusted(text: string): unknown {
  return capDepth(JSON.parse(text), MAX_JSON_DEPTH);
}

/**
 * A string holding a JSON object or array, parsed; any other value (or text that is not such JSON)
 * unchanged. Tool arguments and results travel as either.
 * @example jsonOrText('{"id":"O-1"}') // { id: 'O-1' };  jsonOrText('hello') // 'hello'
 */
export function jsonOrText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const parsed = parseJson(value);
  return parsed.ok ? parsed.value : value;
}

/**
 * Why JSON.parse refused a text, on one line: Node quotes the text it failed on, newlines and all,
 * which would break a one-line error.
 * @example whyNotJson(new SyntaxError('Unexpected token \'h\', "hi\nthere" is not valid JSON')) // '… "hi\\nthere" …'
 */
export function whyNotJson(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/\r/g, '\\r').replace(/\n/g, '\\n');
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * `value` with every array or object that would nest deeper than `levels` (the value itself is
 * level 1) replaced by its JSON text, so what a writer is handed (an agent's request, a tool's
 * arguments) never makes a line the reader refuses. The same value when nothing is that deep
 * (nothing copied); the walk never goes deeper than `levels`, however deep the value.
 * @example capDepth({ a: [[1]] }, 2) // { a: '[[1]]' }
 */
export function capDepth(value: unknown, levels: number): unknown {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  if (levels <= 0) return depthText(value);
  return mapItems(value, (item) => capDepth(item, levels - 1));
}

/**
 * An array's or object's items through `fn`, copied only when one changed (the same value when
 * none did). capDepth's and cutLongStrings' one walk.
 */
function mapItems(value: object, fn: (item: unknown) => unknown): object {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const mapped = fn(item);
      if (mapped !== item) {
        out ??= value.slice();
        out[i] = mapped;
      }
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item: unknown = (value as Record<string, unknown>)[key];
    const mapped = fn(item);
    if (mapped !== item) {
      // Spread defines own keys, so a key named `__proto__` stays a key.
      out ??= { ...(value as Record<string, unknown>) };
      out[key] = mapped;
    }
  }
  return out ?? value;
}

/**
 * JSON.stringify without recursion: the engine's own overflows the stack some thousands of levels
 * down (sooner on a deep call stack), and a value cut by capDepth may be that deep.
 */
function depthText(value: object): string {
  const out: string[] = [];
  const literal = (text: string) => ({ literal: text });
  type Task = { literal: string } | { value: unknown };
  const tasks: Task[] = [{ value }];
  while (tasks.length > 0) {
    const task = tasks.pop() as Task;
    if ('literal' in task) {
      out.push(task.literal);
      continue;
    }
    let v = task.value;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON(): unknown }).toJSON();
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) {
      out.push(JSON.stringify(v) ?? 'null');
      continue;
    }
    if (Array.isArray(v)) {
      tasks.push(literal(']'));
      for (let i = v.length - 1; i >= 0; i--) {
        tasks.push({ value: v[i] });
        if (i > 0) tasks.push(literal(','));
      }
      tasks.push(literal('['));
      continue;
    }
    const entries = Object.entries(v).filter(([, item]) => item !== undefined && typeof item !== 'function');
    tasks.push(literal('}'));
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i] as [string, unknown];
      tasks.push({ value: item });
      tasks.push(literal(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`));
    }
    tasks.push(literal('{'));
  }
  return out.join('');
}

/**
 * `value` with every string longer than `keep` characters cut to its first `keep` and a note of
 * its length (a surrogate pair is never split). The same value when no string is that long.
 * @example cutLongStrings({ a: 'abcdef' }, 2) // { a: 'ab… [cut by tapedeck: 6 characters]' }
 */
export function cutLongStrings(value: unknown, keep: number): unknown {
  if (typeof value === 'string') {
    if (value.length <= keep) return value;
    const end = /[\uD800-\uDBFF]/.test(value.charAt(keep - 1)) ? keep - 1 : keep;
    return `${value.slice(0, end)}… [cut by tapedeck: ${value.length} characters]`;
  }
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  return mapItems(value, (item) => cutLongStrings(item, keep));
}
