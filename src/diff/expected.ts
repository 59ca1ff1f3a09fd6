// The expected world state a contract asks for (files, rows, requests: exists / absent / equals / matches),
// checked against a recording's post-world and its side effects; also decides which changes were asked for.
import * as z from 'zod';
import { type DbSnapshot, type FsSnapshot, fileBytes, type Row, rowFacts } from '../recording/index.js';
import { decodeText } from './fs-diff.js';
import { requestSucceeded } from './http-effects.js';
import { globToRegExp, holdsValue, looseEqual, mismatchedKeys } from './match.js';
import type { DbChange, FsChange, HttpEffect, StateChange } from './types.js';

const Presence = { exists: z.boolean().optional(), absent: z.boolean().optional() };

export const FileExpectationSchema = z
  .object({
    path: z.string().min(1),
    ...Presence,
    /** Exact text content. */
    equals: z.string().optional(),
    /** Regular expression the text content must match. */
    matches: z.string().optional(),
  })
  .strict();

export const RowExpectationSchema = z
  .object({
    /** `schema.table`, or `table` (any schema). */
    table: z.string().min(1),
    /** Which rows: column -> value (equal, or the same value in another form: holdsValue). All rows when omitted. */
    where: z.record(z.string(), z.unknown()).optional(),
    ...Presence,
    /** Column -> value every selected row must have. */
    equals: z.record(z.string(), z.unknown()).optional(),
    /** Column -> regular expression every selected row must match. */
    matches: z.record(z.string(), z.string()).optional(),
    /**
     * Which lists in `equals` (and `where`) compare in order: `true` all, `false` none, or the keys
     * named. Unsaid: a list whose key says it ranks or sequences (`ranking`, `top_ids`, `route`) in
     * order, any other (ids booked, tags) in any order (src/diff/match.ts isOrdered).
     */
    ordered: z.union([z.boolean(), z.array(z.string())]).optional(),
    /** Exact number of selected rows. */
    count: z.number().int().nonnegative().optional(),
  })
  .strict();

export const RequestExpectationSchema = z
  .object({
    method: z.string().optional(),
    /** Substring of the request URL (or the tool name of an in-process tool). */
    url: z.string().optional(),
    tool: z.string().optional(),
    ...Presence,
    /** Parameter -> value, searched in the body, query and arguments (loose equality). */
    equals: z.record(z.string(), z.unknown()).optional(),
    /**
     * Which lists in `equals` (and `where`) compare in order: `true` all, `false` none, or the keys
     * named. Unsaid: a list whose key says it ranks or sequences (`ranking`, `top_ids`, `route`) in
     * order, any other (ids booked, tags) in any order (src/diff/match.ts isOrdered).
     */
    ordered: z.union([z.boolean(), z.array(z.string())]).optional(),
    /** A regex over "METHOD target parameters-json", or parameter -> regex. */
    matches: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
    count: z.number().int().nonnegative().optional(),
  })
  .strict();

export const ExpectedStateSchema = z
  .object({
    files: z.array(FileExpectationSchema).optional(),
    rows: z.array(RowExpectationSchema).optional(),
    requests: z.array(RequestExpectationSchema).optional(),
    /** Changes that are neither asked for nor side effects (logs, caches): file globs, tables, URL substrings/tools. */
    allow: z
      .object({
        files: z.array(z.string()).optional(),
        tables: z.array(z.string()).optional(),
        requests: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    /** What an unrequested change does: fail the hard state gate (default), only lower the score, or nothing. */
    side_effects: z.enum(['fail', 'warn', 'ignore']).optional(),
  })
  .strict();

export type FileExpectation = z.infer<typeof FileExpectationSchema>;
export type RowExpectation = z.infer<typeof RowExpectationSchema>;
export type RequestExpectation = z.infer<typeof RequestExpectationSchema>;
export type ExpectedState = z.infer<typeof ExpectedStateSchema>;

export interface ExpectationResult {
  /** Where it is in the contract, e.g. `expected_state.rows[0]`. */
  id: string;
  kind: 'file' | 'row' | 'request';
  description: string;
  passed: boolean;
  /** The expectation asks for something to exist (vs. to be absent). */
  wantsPresence: boolean;
  /** Ids of the state objects it selected (see stateObjectId). */
  objects: string[];
  codes: string[];
  message: string;
  /** Steps of the selected objects' changes. */
  steps: number[];
}

export interface PostWorld {
  fs?: FsSnapshot;
  db?: DbSnapshot;
  readBlob?: (sha256: string) => Uint8Array;
}

/** Stable ids of state objects, as in eval_state_result.state_object_id. */
export const objectId = {
  file: (path: string) => `file:${path}`,
  row: (schema: string, table: string, key: Row) => `row:${schema}.${table}${JSON.stringify(sortKeys(key))}`,
  request: (e: HttpEffect) => `request:${e.read === true ? 'read ' : ''}${e.index}:${e.method} ${e.target}`,
};

function sortKeys(row: Row): Row {
  const out: Row = {};
  for (const k of Object.keys(row).sort()) out[k] = row[k];
  return out;
}

export function changeObjectId(change: StateChange): string {
  if (change.kind === 'file') return objectId.file(change.path);
  if (change.kind === 'row') return objectId.row(change.schema, change.table, change.key);
  return objectId.request(change);
}

function tableMatches(wanted: string, schema: string, table: string): boolean {
  return wanted === table || wanted === `${schema}.${table}`;
}

/**
 * Whether `row` is one `e.where` selects: each column holds its value, equal or the same value in
 * another form (`CONFIRMED`, a timestamp written without its milliseconds or in another offset) —
 * else a row present is missed, and `absent: true` passes. Read once per distinct value (`memo`):
 * a table of 100,000 rows repeats few, and reading a timestamp costs a fraction of a millisecond.
 */
function rowSelected(e: RowExpectation, row: Row, memo?: Map<string, boolean>): boolean {
  if (!e.where) return true;
  for (const [k, v] of Object.entries(e.where)) {
    const actual = row[k];
    if (looseEqual(v, actual, e.ordered)) continue;
    const id = memo && `${k}\u0000${typeof actual}\u0000${JSON.stringify(actual)}`;
    let holds = id === undefined ? undefined : memo?.get(id);
    if (holds === undefined) {
      holds = holdsValue(v, actual, k, k, e.ordered);
      if (id !== undefined) memo?.set(id, holds);
    }
    if (!holds) return false;
  }
  return true;
}

export function requestSelected(e: RequestExpectation, r: HttpEffect): boolean {
  if (e.method && e.method.toUpperCase() !== r.method) return false;
  if (e.url && !r.target.includes(e.url)) return false;
  if (e.tool && e.tool !== r.name && e.tool !== r.route) return false;
  return true;
}

function presenceOf(e: { exists?: boolean | undefined; absent?: boolean | undefined }): boolean {
  if (e.absent === true) return false;
  if (e.exists === false) return false;
  return true;
}

function readText(
  fs: FsSnapshot | undefined,
  path: string,
  readBlob?: (sha: string) => Uint8Array,
): string | null | undefined {
  const entry = fs?.files[path];
  if (!entry || !readBlob) return undefined;
  try {
    return decodeText(fileBytes(entry, readBlob));
  } catch {
    return undefined;
  }
}

/** Checks every expectation against the post-world and the effects; pure. */
export function checkExpectations(
  expected: ExpectedState,
  post: PostWorld,
  changes: { files: FsChange[]; rows: DbChange[]; requests: HttpEffect[] },
): ExpectationResult[] {
  const results: ExpectationResult[] = [];
  const stepsOfFile = new Map(changes.files.map((c) => [c.path, c.steps]));
  (expected.files ?? []).forEach((e, i) => {
    const wants = presenceOf(e);
    const entry = post.fs?.files[e.path];
    const r: ExpectationResult = {
      id: `expected_state.files[${i}]`,
      kind: 'file',
      description: `file ${e.path}${wants ? ' exists' : ' is absent'}`,
      passed: true,
      wantsPresence: wants,
      objects: [objectId.file(e.path)],
      codes: [],
      message: '',
      steps: stepsOfFile.get(e.path) ?? [],
    };
    if (post.fs === undefined) {
      // Recorded without a file world: nothing says what the run left there, either way.
      fail(
        r,
        'EVIDENCE_SOURCE_INACCESSIBLE',
        `the recording holds no files (recorded without --fs): whether ${e.path} ${wants ? 'exists' : 'is absent'} cannot be checked`,
      );
    } else if (!wants) {
      if (entry) fail(r, 'STATE_MISMATCH', `${e.path} exists but the contract expects it absent`);
    } else if (!entry) {
      fail(r, 'STATE_CHANGE_FAILED', `${e.path} does not exist after the run`);
    } else if (e.equals !== undefined || e.matches !== undefined) {
      const text = readText(post.fs, e.path, post.readBlob);
      if (typeof text !== 'string') fail(r, 'STATE_MISMATCH', `${e.path} is not readable as text`);
      else if (e.equals !== undefined && text !== e.equals)
        fail(r, 'STATE_MISMATCH', `${e.path} content differs from the expected text`);
      else if (e.matches !== undefined && !new RegExp(e.matches, 'm').test(text))
        fail(r, 'STATE_MISMATCH', `${e.path} content does not match /${e.matches}/`);
    }
    if (r.passed) r.message = `${r.description}: ok`;
    results.push(r);
  });

  const rowChangeSteps = new Map<string, number[]>();
  for (const c of changes.rows) rowChangeSteps.set(objectId.row(c.schema, c.table, c.key), c.steps);
  (expected.rows ?? []).forEach((e, i) => {
    const wants = presenceOf(e);
    const selected: Array<{ id: string; row: Row }> = [];
    const memo = new Map<string, boolean>();
    for (const t of post.db?.tables ?? []) {
      if (!tableMatches(e.table, t.schema, t.name)) continue;
      const keyCols = t.primaryKey.length > 0 ? t.primaryKey : t.columns.map((c) => c.name);
      for (const held of t.rows) {
        // The contract looks inside json/jsonb values: those held as their text, parsed.
        const row = rowFacts(t, held, post.db?.domains);
        if (!rowSelected(e, row, memo)) continue;
        const key: Row = {};
        for (const c of keyCols) key[c] = held[c];
        selected.push({ id: objectId.row(t.schema, t.name, key), row });
      }
    }
    const where = e.where ? ` where ${JSON.stringify(e.where)}` : '';
    const r: ExpectationResult = {
      id: `expected_state.rows[${i}]`,
      kind: 'row',
      description: `${e.count ?? (wants ? 'some' : 'no')} row(s) in ${e.table}${where}`,
      passed: true,
      wantsPresence: wants,
      objects: selected.map((s) => s.id),
      codes: [],
      message: '',
      steps: [...new Set(selected.flatMap((s) => rowChangeSteps.get(s.id) ?? []))],
    };
    if (post.db === undefined) {
      fail(
        r,
        'EVIDENCE_SOURCE_INACCESSIBLE',
        `the recording holds no database (recorded without --db): rows of ${e.table}${where} cannot be checked`,
      );
    } else if (!wants) {
      if (selected.length > 0)
        fail(r, 'STATE_MISMATCH', `${selected.length} row(s) in ${e.table}${where} exist but are expected absent`);
    } else if (selected.length === 0) {
      fail(r, 'STATE_CHANGE_FAILED', `no row in ${e.table}${where} after the run`);
    } else {
      if (e.count !== undefined && selected.length !== e.count)
        fail(
          r,
          selected.length > e.count ? 'DUPLICATE_EXECUTION' : 'PARTIAL_STATE_CHANGE',
          `${selected.length} row(s) in ${e.table}${where}, expected ${e.count}`,
        );
      for (const s of selected) {
        const bad = Object.entries(e.equals ?? {})
          .filter(([k, v]) => !holdsValue(v, s.row[k], k, k, e.ordered))
          .map(([k, v]) => `${k}=${JSON.stringify(s.row[k])} (expected ${JSON.stringify(v)})`);
        if (bad.length > 0) fail(r, 'STATE_MISMATCH', `${s.id}: ${bad.join(', ')}`);
        for (const [k, re] of Object.entries(e.matches ?? {})) {
          if (!new RegExp(re).test(String(s.row[k] ?? '')))
            fail(r, 'STATE_MISMATCH', `${s.id}: ${k} does not match /${re}/`);
        }
      }
    }
    if (r.passed) r.message = `${r.description}: ok`;
    results.push(r);
  });

  (expected.requests ?? []).forEach((e, i) => {
    const wants = presenceOf(e);
    // Named by method, URL or tool, a request is looked for among reads too; unnamed, among the mutating ones.
    const named = e.method !== undefined || e.url !== undefined || e.tool !== undefined;
    const matching = changes.requests.filter((x) => (named || x.read !== true) && requestSelected(e, x));
    // A request a replay held back was never sent: it cannot show one was made. Tried, it still
    // breaks "was not made", as it is a side effect: that is what the agent would have done.
    const held = matching.filter((x) => x.heldBack);
    const sent = matching.filter((x) => !x.heldBack);
    const selected = wants ? (sent.length > 0 ? sent : held) : matching;
    const what = [e.method, e.tool, e.url].filter(Boolean).join(' ') || 'any mutating request';
    const r: ExpectationResult = {
      id: `expected_state.requests[${i}]`,
      kind: 'request',
      description: `${what}${wants ? ' was made' : ' was not made'}`,
      passed: true,
      wantsPresence: wants,
      objects: selected.map((x) => objectId.request(x)),
      codes: [],
      message: '',
      steps: selected.flatMap((x) => x.steps),
    };
    const heldAt = held.length > 0 ? `held back by the replay (never sent) at step ${stepList(held)}` : '';
    if (!wants) {
      if (sent.length > 0) fail(r, 'UNAUTHORIZED_ACTION', `${what} was made at step ${stepList(sent)}`);
      if (held.length > 0) fail(r, 'UNAUTHORIZED_ACTION', `${what} was tried and ${heldAt}`);
    } else if (sent.length === 0) {
      fail(r, 'ACTION_NOT_EXECUTED', held.length > 0 ? `${what} was ${heldAt}` : `no ${what} in the run`);
    } else {
      // Too many are counted by those that succeeded: an attempt answered 503 and retried once is
      // one request made, not a duplicate.
      const counted = e.count !== undefined && sent.length > e.count ? sent.filter(requestSucceeded) : sent;
      if (e.count !== undefined && counted.length !== e.count)
        fail(
          r,
          counted.length > e.count ? 'DUPLICATE_EXECUTION' : 'PARTIAL_STATE_CHANGE',
          `${counted.length}${counted.length < sent.length ? ` of ${sent.length} (the others failed)` : ''} ${what} (steps ${stepList(counted.length > 0 ? counted : sent)}), expected ${e.count}`,
        );
      for (const x of selected) {
        if (e.equals) {
          const misses = mismatchedKeys(e.equals, x.parameters, x.target, e.ordered);
          if (misses.length > 0)
            fail(
              r,
              'WRONG_EXECUTION_PARAMETERS',
              `step ${x.stepId} ${x.method} ${x.target}: ${misses.map((m) => `${m.key}=${JSON.stringify(m.actual[0])} (expected ${JSON.stringify(m.expected)})`).join(', ')}`,
            );
        }
        if (typeof e.matches === 'string') {
          if (!new RegExp(e.matches).test(`${x.method} ${x.target} ${JSON.stringify(x.parameters)}`))
            fail(
              r,
              'WRONG_EXECUTION_PARAMETERS',
              `step ${x.stepId} ${x.method} ${x.target} does not match /${e.matches}/`,
            );
        } else if (e.matches) {
          for (const [k, re] of Object.entries(e.matches)) {
            if (!new RegExp(re).test(String(x.parameters[k] ?? '')))
              fail(r, 'WRONG_EXECUTION_PARAMETERS', `step ${x.stepId}: ${k} does not match /${re}/`);
          }
        }
      }
    }
    if (r.passed) r.message = `${r.description}: ok`;
    results.push(r);
  });
  return results;
}

function stepList(requests: HttpEffect[]): string {
  return requests.map((x) => x.stepId).join(', ');
}

function fail(r: ExpectationResult, code: string, message: string): void {
  r.passed = false;
  if (!r.codes.includes(code)) r.codes.push(code);
  r.message = r.message ? `${r.message}; ${message}` : message;
}

/**
 * Was this change asked for? A change is requested when a presence expectation selects it, an absence
 * expectation explains its deletion, or the allow list names it. Anything else is a side effect.
 */
export function isRequestedChange(change: StateChange, expected: ExpectedState | undefined): boolean {
  if (!expected) return false;
  const allow = expected.allow;
  if (change.kind === 'file') {
    if (allow?.files?.some((g) => globToRegExp(g).test(change.path))) return true;
    return (expected.files ?? []).some(
      (e) => e.path === change.path && (presenceOf(e) ? change.op !== 'delete' : change.op === 'delete'),
    );
  }
  if (change.kind === 'row') {
    if (allow?.tables?.some((t) => tableMatches(t, change.schema, change.table))) return true;
    return (expected.rows ?? []).some((e) => {
      if (!tableMatches(e.table, change.schema, change.table)) return false;
      if (presenceOf(e)) return change.after !== undefined && rowSelected(e, change.after);
      return change.op === 'delete' && change.before !== undefined && rowSelected(e, change.before);
    });
  }
  if (allow?.requests?.some((a) => change.target.includes(a) || change.name === a)) return true;
  return (expected.requests ?? []).some((e) => presenceOf(e) && requestSelected(e, change));
}
