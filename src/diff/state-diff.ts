// The state-diff engine: a recording's post-world against its pre-world, the contract's expected state and
// another recording's post-world; every change attributed to its step; eval_state_result rows with state scores.
import {
  canonicalJson,
  type DbSnapshot,
  endWorld,
  type FsSnapshot,
  fileBytes,
  type Recording,
  type RecordingEvent,
} from '../recording/index.js';
import { diffDb, rowRef } from './db-diff.js';
import {
  changeObjectId,
  checkExpectations,
  type ExpectationResult,
  type ExpectedState,
  isRequestedChange,
  objectId,
} from './expected.js';
import { decodeText, diffFs } from './fs-diff.js';
import { collectHttpEffects, requestSucceeded } from './http-effects.js';
import {
  type DbChange,
  DEFAULT_STATE_WEIGHTS,
  type EvalStateResult,
  type FsChange,
  type HttpEffect,
  type StateChange,
  type StateScoreWeights,
  type WorldChanges,
} from './types.js';

export interface StateDiffOptions {
  /** Compare this recording's post-world with another recording's post-world. */
  against?: Recording;
  /** The contract's expected world state. Without it, no change is called a side effect. */
  expected?: ExpectedState;
  /** eval_state_result.eval_id; default `<recording id>`. */
  evalId?: string;
  weights?: Partial<StateScoreWeights>;
  /** Skip unified text diffs (hash comparison only). */
  textDiffs?: boolean;
}

export interface AgainstDiff {
  recordingId: string;
  /** Files that differ from the other recording's post-world (op is from the other's point of view to this one). */
  files: FsChange[];
  rows: DbChange[];
  /** Mutating requests made here but not there, and there but not here (by method, target, parameters). */
  requestsOnlyHere: HttpEffect[];
  requestsOnlyThere: HttpEffect[];
}

export interface StateDiff {
  traceId: string;
  /** The post-world against the pre-world. */
  changes: WorldChanges;
  /** One result per contract expectation (empty without `expected`). */
  expectations: ExpectationResult[];
  /** Changes the contract did not ask for. */
  sideEffects: StateChange[];
  sideEffectPolicy: 'fail' | 'warn' | 'ignore';
  against?: AgainstDiff;
  /** The seed's eval_state_result rows, one per changed or expected state object. */
  rows: EvalStateResult[];
  /** Hard State Gate (000 §10): every expectation holds and (policy `fail`) no side effect. */
  hardStateGate: boolean;
  /** Mean state_change_score over the rows (10 when nothing changed and nothing was expected). */
  stateChangeScore: number;
  /** Failure codes of the state gate, deduplicated. */
  failureReasonCodes: string[];
}

/** path -> steps, rowRef -> steps, from the fs.changed / db.changed events. */
export function changeAttribution(events: readonly RecordingEvent[]): {
  files: Map<string, number[]>;
  rows: Map<string, number[]>;
} {
  const files = new Map<string, number[]>();
  const rows = new Map<string, number[]>();
  const add = (m: Map<string, number[]>, k: string, step: number) => {
    const list = m.get(k);
    if (!list) m.set(k, [step]);
    else if (list.at(-1) !== step) list.push(step);
  };
  for (const e of events) {
    if (e.type === 'fs.changed') add(files, e.payload.path, e.stepId);
    else if (e.type === 'db.changed') add(rows, rowRef(e.payload.schema, e.payload.table, e.payload.key), e.stepId);
  }
  return { files, rows };
}

/** The post-world: the post snapshot, or (an incomplete recording) the pre snapshot plus the recorded changes (endWorld). */
export function postWorld(recording: Recording): { fs?: FsSnapshot; db?: DbSnapshot } {
  return endWorld(recording);
}

function effectSignature(e: HttpEffect): string {
  return `${e.method} ${e.target} ${canonicalJson(e.parameters)}`;
}

function traceIdOf(recording: Recording): string {
  return recording.events[0]?.traceId ?? recording.manifest.id;
}

/**
 * Diff a recording's world. Example:
 * ```ts
 * const d = stateDiff(recording, { expected: contract.expected_state });
 * d.sideEffects; // changes nobody asked for, each with its stepId
 * ```
 */
export function stateDiff(recording: Recording, options: StateDiffOptions = {}): StateDiff {
  const readBlob = (sha: string): Uint8Array => recording.readBlob(sha);
  const attribution = changeAttribution(recording.events);
  const post = postWorld(recording);
  const textDiffs = options.textDiffs !== false;
  const changes: WorldChanges = {
    files: diffFs(recording.pre.fs, post.fs, { attribution: attribution.files, ...(textDiffs ? { readBlob } : {}) }),
    rows: diffDb(recording.pre.db, post.db, { attribution: attribution.rows }),
    requests: collectHttpEffects(recording.events, readBlob),
  };
  const expected = options.expected;
  // Request expectations name reads too ("the agent looked up the order"); side effects stay the mutating ones.
  const looked =
    expected !== undefined && (expected.requests ?? []).length > 0
      ? collectHttpEffects(recording.events, readBlob, { reads: true })
      : changes.requests;
  const expectations = expected
    ? checkExpectations(expected, { ...post, readBlob }, { ...changes, requests: looked })
    : [];
  const policy = expected?.side_effects ?? 'fail';
  const all: StateChange[] = [...changes.files, ...changes.rows, ...changes.requests];
  // A request is asked for when an expectation selects it, or when the world change it made at its step
  // (a file, a row) was asked for: the contract names the outcome, the request is the means.
  const requestedSteps = new Set<number>();
  if (expected)
    for (const c of [...changes.files, ...changes.rows])
      if (isRequestedChange(c, expected)) for (const s of c.steps) requestedSteps.add(s);
  const asked = (c: StateChange) =>
    isRequestedChange(c, expected) || (c.kind === 'request' && c.stepId !== null && requestedSteps.has(c.stepId));
  // A failed attempt (a 503 retried) of a request asked for and made is part of making it, not a side effect.
  const attempt = (c: HttpEffect) => `${c.method} ${c.target}`;
  const madeAsked = new Set(changes.requests.filter((c) => requestSucceeded(c) && asked(c)).map(attempt));
  const requested = (c: StateChange) =>
    asked(c) || (c.kind === 'request' && !requestSucceeded(c) && madeAsked.has(attempt(c)));
  const sideEffects = expected && policy !== 'ignore' ? all.filter((c) => !requested(c)) : [];

  const result: StateDiff = {
    traceId: traceIdOf(recording),
    changes,
    expectations,
    sideEffects,
    sideEffectPolicy: policy,
    rows: [],
    hardStateGate: true,
    stateChangeScore: 10,
    failureReasonCodes: [],
  };
  if (options.against) {
    const other = options.against;
    const otherPost = postWorld(other);
    const otherEffects = collectHttpEffects(other.events, (sha) => other.readBlob(sha));
    const here = new Map<string, number>();
    for (const e of changes.requests) here.set(effectSignature(e), (here.get(effectSignature(e)) ?? 0) + 1);
    const there = new Map<string, number>();
    for (const e of otherEffects) there.set(effectSignature(e), (there.get(effectSignature(e)) ?? 0) + 1);
    const onlyIn = (list: HttpEffect[], counts: Map<string, number>) => {
      const left = new Map(counts);
      return list.filter((e) => {
        const n = left.get(effectSignature(e)) ?? 0;
        if (n > 0) {
          left.set(effectSignature(e), n - 1);
          return false;
        }
        return true;
      });
    };
    result.against = {
      recordingId: other.manifest.id,
      files: diffFs(otherPost.fs, post.fs, {
        attribution: attribution.files,
        ...(textDiffs ? { readBlob: crossReader(recording, other) } : {}),
      }),
      rows: diffDb(otherPost.db, post.db, { attribution: attribution.rows }),
      requestsOnlyHere: onlyIn(changes.requests, there),
      requestsOnlyThere: onlyIn(otherEffects, here),
    };
  }
  result.rows = stateRows(result, post, readBlob, options, looked);
  const codes = new Set<string>();
  for (const e of expectations) for (const c of e.codes) codes.add(c);
  if (policy === 'fail' && sideEffects.length > 0) codes.add('UNAUTHORIZED_ACTION');
  const present = expectations.filter((e) => e.wantsPresence);
  if (present.some((e) => e.passed) && present.some((e) => !e.passed)) codes.add('PARTIAL_STATE_CHANGE');
  result.failureReasonCodes = [...codes];
  result.hardStateGate = expectations.every((e) => e.passed) && !(policy === 'fail' && sideEffects.length > 0);
  if (result.rows.length > 0)
    result.stateChangeScore = round(result.rows.reduce((s, r) => s + r.stateChangeScore, 0) / result.rows.length);
  return result;
}

/** Reads a blob from either recording (the two post-worlds may hold different files). */
function crossReader(a: Recording, b: Recording): (sha: string) => Uint8Array {
  return (sha) => {
    try {
      return a.readBlob(sha);
    } catch {
      return b.readBlob(sha);
    }
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function stateRows(
  diff: StateDiff,
  post: { fs?: FsSnapshot; db?: DbSnapshot },
  readBlob: (sha: string) => Uint8Array,
  options: StateDiffOptions,
  /** The requests expectations were checked against (reads too), for the reads they name. */
  looked: readonly HttpEffect[],
): EvalStateResult[] {
  const w = { ...DEFAULT_STATE_WEIGHTS, ...options.weights };
  const evalId = options.evalId ?? diffIdOf(diff);
  const sideIds = new Set(diff.sideEffects.map(changeObjectId));
  const byId = new Map<string, EvalStateResult>();
  const make = (
    id: string,
    type: EvalStateResult['stateObjectType'],
    path: string,
    stepId: number | null,
  ): EvalStateResult => ({
    evalId,
    traceId: diff.traceId,
    stateObjectId: id,
    stateObjectType: type,
    stateObjectPath: path,
    stateAction: null,
    existsAfterRun: false,
    readableAfterRun: false,
    nonEmptyAfterRun: false,
    expectedStateMatch: null,
    sideEffectDetected: false,
    targetStateMatchScore: 10,
    contentUsabilityScore: 0,
    formatQualityScore: 10,
    boundaryControlScore: 10,
    stateChangeScore: 0,
    failureReasonCodes: [],
    diffSummary: {},
    stepId,
  });
  for (const c of diff.changes.files) {
    const row = make(objectId.file(c.path), 'file', c.path, c.stepId);
    row.stateAction = c.op;
    row.diffSummary = {
      op: c.op,
      binary: c.binary,
      ...(c.added !== undefined ? { added: c.added, removed: c.removed } : {}),
      ...(c.before ? { beforeSha256: c.before.sha256, beforeSize: c.before.size } : {}),
      ...(c.after ? { afterSha256: c.after.sha256, afterSize: c.after.size } : {}),
      ...(c.patch !== undefined ? { patch: c.patch.length > 4000 ? `${c.patch.slice(0, 4000)}\n…` : c.patch } : {}),
      steps: c.steps,
    };
    byId.set(row.stateObjectId, row);
  }
  for (const c of diff.changes.rows) {
    const row = make(objectId.row(c.schema, c.table, c.key), 'db_row', `${c.schema}.${c.table}`, c.stepId);
    row.stateAction = c.op === 'insert' ? 'create' : c.op === 'update' ? 'modify' : 'delete';
    const pickCols = (r: Record<string, unknown> | undefined) =>
      r ? Object.fromEntries(c.changedColumns.map((k) => [k, r[k]])) : undefined;
    row.diffSummary = {
      op: c.op,
      key: c.key,
      changedColumns: c.changedColumns,
      before: pickCols(c.before),
      after: pickCols(c.after),
      steps: c.steps,
    };
    byId.set(row.stateObjectId, row);
  }
  for (const e of diff.changes.requests) {
    const row = make(objectId.request(e), 'http_request', `${e.method} ${e.target}`, e.stepId);
    row.stateAction = 'submit';
    row.diffSummary = {
      name: e.name,
      method: e.method,
      target: e.target,
      parameters: e.parameters,
      executed: e.executed,
      heldBack: e.heldBack,
      ...(e.status !== undefined ? { status: e.status } : {}),
      ...(e.error ? { error: e.error } : {}),
    };
    byId.set(row.stateObjectId, row);
  }
  const absenceHeld = new Set<string>();
  for (const x of diff.expectations) {
    const ids =
      x.objects.length > 0
        ? x.objects
        : [x.kind === 'file' ? (x.objects[0] ?? `expectation:${x.id}`) : `expectation:${x.id}`];
    // Once per object: a table without a primary key may hold the same row many times.
    for (const id of new Set(ids)) {
      let row = byId.get(id);
      if (!row) {
        const type = x.kind === 'file' ? 'file' : x.kind === 'row' ? 'db_row' : 'http_request';
        row = make(id, type, id.startsWith('file:') ? id.slice(5) : x.description, x.steps.at(-1) ?? null);
        row.diffSummary = { expectation: x.id, unchanged: x.objects.length > 0 };
        byId.set(id, row);
      }
      row.expectedStateMatch = row.expectedStateMatch === false ? false : x.passed;
      for (const c of x.codes) if (!row.failureReasonCodes.includes(c)) row.failureReasonCodes.push(c);
      row.diffSummary = {
        ...row.diffSummary,
        expectations: [...((row.diffSummary.expectations as string[]) ?? []), x.id],
      };
      if (!x.passed) row.diffSummary = { ...row.diffSummary, message: x.message };
      // Nothing there, as an `absent` expectation asked: as usable as a deletion asked for.
      if (!x.wantsPresence && x.passed && x.objects.length === 0) absenceHeld.add(id);
    }
  }
  const requests = new Map(looked.map((e) => [objectId.request(e), e]));
  for (const row of byId.values()) {
    fillPresence(row, post, readBlob, diff, requests, absenceHeld.has(row.stateObjectId));
    if (sideIds.has(row.stateObjectId)) {
      row.sideEffectDetected = true;
      row.boundaryControlScore = 0;
      if (diff.sideEffectPolicy === 'fail' && !row.failureReasonCodes.includes('UNAUTHORIZED_ACTION'))
        row.failureReasonCodes.push('UNAUTHORIZED_ACTION');
    }
    row.targetStateMatchScore = row.expectedStateMatch === false ? 0 : 10;
    row.stateChangeScore = round(
      w.targetStateMatch * row.targetStateMatchScore +
        w.contentUsability * row.contentUsabilityScore +
        w.formatQuality * row.formatQualityScore +
        w.boundaryControl * row.boundaryControlScore,
    );
  }
  return [...byId.values()];
}

function diffIdOf(diff: StateDiff): string {
  return diff.traceId;
}

const requestIndex = new WeakMap<StateDiff, Map<string, HttpEffect>>();
function requestsById(diff: StateDiff): Map<string, HttpEffect> {
  let m = requestIndex.get(diff);
  if (!m) {
    m = new Map(diff.changes.requests.map((e) => [objectId.request(e), e]));
    requestIndex.set(diff, m);
  }
  return m;
}

/** exists / readable / non-empty after the run, and the content and format scores that follow from them. */
function fillPresence(
  row: EvalStateResult,
  post: { fs?: FsSnapshot; db?: DbSnapshot },
  readBlob: (sha: string) => Uint8Array,
  diff: StateDiff,
  looked: ReadonlyMap<string, HttpEffect>,
  absenceHeld: boolean,
): void {
  const deletionWanted = (row.stateAction === 'delete' || absenceHeld) && row.expectedStateMatch === true;
  if (row.stateObjectType === 'file') {
    const entry = post.fs?.files[row.stateObjectPath];
    row.existsAfterRun = entry !== undefined;
    if (entry) {
      let text: string | null | undefined;
      try {
        const bytes = fileBytes(entry, readBlob);
        row.readableAfterRun = true;
        text = decodeText(bytes);
      } catch {
        row.readableAfterRun = false;
      }
      row.nonEmptyAfterRun = entry.size > 0;
      row.contentUsabilityScore = !row.readableAfterRun ? 2 : row.nonEmptyAfterRun ? 10 : 3;
      row.formatQualityScore = formatScore(row.stateObjectPath, text);
    } else {
      row.contentUsabilityScore = deletionWanted ? 10 : 0;
      row.formatQualityScore = deletionWanted ? 10 : 0;
    }
    return;
  }
  if (row.stateObjectType === 'db_row') {
    const after = (row.diffSummary.op as string | undefined) !== 'delete' && row.diffSummary.op !== undefined;
    const expectedUnchanged = row.diffSummary.unchanged === true;
    row.existsAfterRun = after || expectedUnchanged;
    row.readableAfterRun = row.existsAfterRun;
    row.nonEmptyAfterRun = row.existsAfterRun;
    row.contentUsabilityScore = row.existsAfterRun || deletionWanted ? 10 : 0;
    row.formatQualityScore = row.existsAfterRun || deletionWanted ? 10 : 0;
    return;
  }
  const effect = requestsById(diff).get(row.stateObjectId) ?? looked.get(row.stateObjectId);
  row.existsAfterRun = effect !== undefined;
  row.readableAfterRun = effect !== undefined;
  row.nonEmptyAfterRun = effect !== undefined && Object.keys(effect.parameters).length > 0;
  const ok = effect !== undefined ? requestSucceeded(effect) : deletionWanted;
  row.contentUsabilityScore = ok ? 10 : 0;
  row.formatQualityScore = ok ? 10 : 0;
}

/** Structured files must parse; other text files are fine; binary files are not judged. */
function formatScore(path: string, text: string | null | undefined): number {
  if (text === undefined || text === null) return 10;
  if (/\.json$/i.test(path)) {
    try {
      JSON.parse(text);
      return 10;
    } catch {
      return 2;
    }
  }
  if (/\.jsonl$/i.test(path)) {
    try {
      for (const line of text.split('\n')) if (line.trim()) JSON.parse(line);
      return 10;
    } catch {
      return 2;
    }
  }
  return 10;
}
