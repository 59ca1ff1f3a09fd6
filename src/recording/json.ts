// Small JSON helpers every module shares: reading untrusted JSON shapes and parsing text that may
// or may not be JSON (bodies, tool arguments). Canonical JSON text is in canonical-json.ts.

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
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
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
