// Where a zod issue points: the field as a path text (`payload.request.headers["x-y"]`) and its
// line in a pretty-printed JSON file, for errors that name file, line and field.
import type * as z from 'zod';
import { RecordingError } from './errors.js';
import { nearestName } from './nearest-name.js';

/** `payload.request.headers["x-y"]`-style path of a zod issue. */
export function formatFieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out === '' ? '(root)' : out;
}

/**
 * The issue worth reporting first: a misspelt key (`sucess_criteria`) makes zod report the field it
 * was meant to be as missing too, and the missing field alone hides the typo. An unknown key beside a
 * missing field at the same place comes first, with the missing field it most likely meant (`hint`).
 */
export function leadingIssue(error: z.ZodError): { issue: z.core.$ZodIssue; hint?: string } {
  const issues = error.issues as z.core.$ZodIssue[];
  const first = issues[0] as z.core.$ZodIssue;
  const samePlace = (a: z.core.$ZodIssue, b: z.core.$ZodIssue) =>
    a.path.length === b.path.length - 1 && a.path.every((seg, i) => seg === b.path[i]);
  for (const unknown of issues) {
    if (unknown.code !== 'unrecognized_keys') continue;
    const missing = issues.filter(
      (m) => m.code === 'invalid_type' && / received undefined$/.test(m.message) && samePlace(unknown, m),
    );
    if (missing.length === 0) continue;
    const names = missing.map((m) => String(m.path[m.path.length - 1]));
    const meant = unknown.keys.map((key) => nearestName(key, names)).find((name) => name !== undefined);
    return meant ? { issue: unknown, hint: `did you mean ${meant}?` } : { issue: unknown };
  }
  return { issue: first };
}

export function issueField(issue: z.core.$ZodIssue, prefix: ReadonlyArray<PropertyKey> = []): string {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) path.push(issue.keys[0] as string);
  return formatFieldPath(path);
}

export function issueProblem(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field (${issue.keys.map((k) => JSON.stringify(k)).join(', ')})`;
  // zod says "received undefined" for a field that is not there: say it as a user reads it.
  // A record's key the key schema refused (a header name): the key schema's own words.
  if (issue.code === 'invalid_key' && issue.issues[0] !== undefined) return issueProblem(issue.issues[0]);
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message))
    return `is missing (expected ${issue.expected})`;
  return issue.message;
}

/** The 1-based line of the last path segment found in a pretty-printed JSON text (best effort). */
export function lineOf(text: string, path: ReadonlyArray<PropertyKey>): number {
  let pos = 0;
  for (const seg of path) {
    if (typeof seg !== 'string') continue;
    const at = text.indexOf(JSON.stringify(seg), pos);
    if (at >= 0) pos = at;
  }
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The error for a JSON file of the recording (its text) that its schema refused: the first issue, located. */
export function schemaError(dir: string, file: string, text: string, error: z.ZodError): RecordingError {
  const issue = error.issues[0] as z.core.$ZodIssue;
  return new RecordingError(
    { dir, file, line: lineOf(text, issue.path), field: issueField(issue) },
    issueProblem(issue),
  );
}

/** The error for a value at `path` of a JSON file of the recording (its text) that is wrong for a reason of ours. */
export function fieldError(
  dir: string,
  file: string,
  text: string,
  path: ReadonlyArray<PropertyKey>,
  problem: string,
): RecordingError {
  return new RecordingError({ dir, file, line: lineOf(text, path), field: formatFieldPath(path) }, problem);
}
