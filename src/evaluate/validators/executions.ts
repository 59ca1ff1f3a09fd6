// What the execution validator calls an execution: a mutating request the run made (or a replay held
// back), or a step that carried out one of the agent's tools and changed the world in-process (rows
// through the agent's own database client, files it wrote), each with what it sent and what it wrote.
import {
  type DbChange,
  type FsChange,
  fileText,
  findKey,
  globToRegExp,
  type HttpEffect,
  requestSucceeded,
} from '../../diff/index.js';
import { isRecord, jsonOrText, stepNames } from '../../recording/index.js';
import type { ValidatorContext } from './types.js';

export interface Execution {
  /** The agent's tool the step carried out (else the capture layer's name, or "http"). */
  name: string;
  /** The capture layer's name (`POST /bookings`, `database changes`) when `name` is the agent's tool. */
  route?: string;
  stepId: number | null;
  seq: number;
  /** The request it made or a replay held back; absent for an in-process world change. */
  request?: HttpEffect;
  /** Rows and files the step changed. */
  rows: DbChange[];
  files: FsChange[];
  /** The tables and paths it changed, bookkeeping the contract allows left out (`app.notes`, `notes/paris.md`). */
  wrote: string[];
  /** What it was asked to do: the request's query, body and tool arguments, or the model's tool-call arguments. */
  parameters: Record<string, unknown>;
  /** The result the agent observed, when known. */
  result?: unknown;
  heldBack: boolean;
  status?: number;
  error?: { code: string; message: string };
}

/** Whether an execution landed: it was sent, and neither its result nor its status says it failed. */
export function hasLanded(x: Execution): boolean {
  return requestSucceeded(x);
}

/** What an execution came to, for a failure message: its HTTP status, else its error's code. */
export function outcomeOf(x: Execution): string {
  if (x.heldBack) return 'held back';
  if (x.status !== undefined && x.status >= 400) return String(x.status);
  return x.error?.code ?? String(x.status ?? 'ok');
}

/** An execution as people read it: the tool and the request or what it wrote ("save_note (wrote app.notes)"). */
export function describeExecution(x: Execution): string {
  const r = x.request;
  if (r !== undefined) return r.route !== undefined ? `${r.name} (${r.method} ${r.target})` : `${r.method} ${r.target}`;
  return `${x.name} (wrote ${x.wrote.join(', ')})`;
}

/** Whether a change is bookkeeping the contract allows (a checkpointer's tables, log files): not an action. */
function isAllowed(ctx: ValidatorContext, c: DbChange | FsChange): boolean {
  const allow = ctx.contract.expected_state?.allow;
  if (c.kind === 'file') return allow?.files?.some((g) => globToRegExp(g).test(c.path)) ?? false;
  return allow?.tables?.some((t) => t === c.table || t === `${c.schema}.${c.table}`) ?? false;
}

/**
 * The executions of a run, in event order: every mutating request (with the rows and files its step
 * changed), then every step with no such request that carried out an agent tool (named after the
 * model's tool call, or an in-process tool) and changed rows or files the contract does not allow
 * as bookkeeping, or that wrote `table`, the table the execution's record lands in.
 */
export function executionsOf(ctx: ValidatorContext, table?: (schema: string, name: string) => boolean): Execution[] {
  const rows = ctx.state.changes.rows;
  const files = ctx.state.changes.files;
  const rowsAt = (stepId: number | null) => (stepId === null ? [] : rows.filter((r) => r.steps.includes(stepId)));
  const filesAt = (stepId: number | null) => (stepId === null ? [] : files.filter((f) => f.steps.includes(stepId)));
  const wroteAt = (stepId: number | null): string[] => {
    const changed = [...rowsAt(stepId), ...filesAt(stepId)];
    const shown = changed.some((c) => !isAllowed(ctx, c)) ? changed.filter((c) => !isAllowed(ctx, c)) : changed;
    return [...new Set(shown.map((c) => (c.kind === 'file' ? c.path : `${c.schema}.${c.table}`)))];
  };
  const out: Execution[] = ctx.state.changes.requests.map((e) => ({
    name: e.name,
    ...(e.route !== undefined ? { route: e.route } : {}),
    stepId: e.stepId,
    seq: e.seq,
    request: e,
    rows: rowsAt(e.stepId),
    files: filesAt(e.stepId),
    wrote: wroteAt(e.stepId),
    parameters: e.parameters,
    ...(e.result !== undefined ? { result: e.result } : {}),
    heldBack: e.heldBack,
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...(e.error !== undefined ? { error: e.error } : {}),
  }));
  const requestSteps = new Set(out.map((x) => x.stepId));
  const changedSteps = new Set<number>();
  for (const c of [...rows, ...files])
    if (!isAllowed(ctx, c) || (c.kind === 'row' && table?.(c.schema, c.table)))
      for (const s of c.steps) changedSteps.add(s);
  const names = stepNames(ctx.recording.events);
  const started = new Map<number, number>();
  const mcpSteps = new Set<number>();
  for (const e of ctx.recording.events)
    if (e.type === 'step.started' && !started.has(e.stepId)) {
      started.set(e.stepId, e.seq);
      if (e.payload.stateType === 'MCP_CALL') mcpSteps.add(e.stepId);
    }
  const toolSteps = new Map(ctx.trajectory.toolSteps.map((s) => [s.stepId, s]));
  // The requests of each tool call: what the same call then wrote through the agent's own client (the
  // recorder's DB_QUERY / file step after the request, named after the same call) is that request's record.
  const requestsOfCall = new Map<string, Execution[]>();
  for (const x of out) {
    const callId = x.stepId === null ? undefined : names.get(x.stepId)?.toolCallId;
    if (callId !== undefined) requestsOfCall.set(callId, [...(requestsOfCall.get(callId) ?? []), x]);
  }
  for (const stepId of [...changedSteps].sort((a, b) => a - b)) {
    if (requestSteps.has(stepId)) continue;
    const named = names.get(stepId);
    const seq = started.get(stepId) ?? 0;
    const request = (named?.toolCallId === undefined ? [] : (requestsOfCall.get(named.toolCallId) ?? []))
      .filter((x) => x.seq < seq)
      .at(-1);
    if (request !== undefined) {
      request.rows = [...request.rows, ...rowsAt(stepId).filter((r) => !request.rows.includes(r))];
      request.files = [...request.files, ...filesAt(stepId).filter((f) => !request.files.includes(f))];
      request.wrote = [...new Set([...request.wrote, ...wroteAt(stepId)])];
      continue;
    }
    const tool = toolSteps.get(stepId);
    const stepRows = rowsAt(stepId);
    const writesTable = stepRows.some((r) => table?.(r.schema, r.table));
    if (named?.toolCallId === undefined && tool === undefined && !writesTable) continue;
    const call = ctx.trajectory.calls.find((c) => c.stepId === stepId && c.thinkStepId !== stepId);
    const args = call?.args ?? tool?.args;
    const resultText = call?.resultText ?? tool?.resultText;
    out.push({
      name: named?.name ?? tool?.name ?? 'database changes',
      ...(named?.route !== undefined ? { route: named.route } : {}),
      stepId,
      seq: started.get(stepId) ?? 0,
      rows: stepRows,
      files: filesAt(stepId),
      wrote: wroteAt(stepId),
      parameters: isRecord(args) ? args : {},
      ...(resultText ? { result: jsonOrText(resultText) } : {}),
      heldBack: false,
      ...(tool?.error !== undefined ? { error: tool.error } : {}),
    });
  }
  // A call that carries out the tool through requests of its own (an MCP server's, a tool()'s) landed
  // only if one of them did or it changed the world itself: a server that swallowed its request's
  // HTTP 500 answered fine, yet nothing happened.
  for (const x of out) {
    if (!hasLanded(x) || x.rows.length > 0 || x.files.length > 0) continue;
    const isWrapper =
      x.request === undefined || x.request.method === 'CALL' || (x.stepId !== null && mcpSteps.has(x.stepId));
    const callId = x.stepId === null ? undefined : names.get(x.stepId)?.toolCallId;
    if (!isWrapper || callId === undefined) continue;
    const own = (requestsOfCall.get(callId) ?? []).filter(
      // Not by seq: a child's events (an MCP server's request) may be written after the call's own.
      (y) =>
        y !== x &&
        y.request !== undefined &&
        y.request.method !== 'CALL' &&
        !(y.stepId !== null && mcpSteps.has(y.stepId)),
    );
    if (own.length === 0 || own.some(hasLanded)) continue;
    const first = own[0]!;
    x.error = {
      code: first.heldBack ? 'HELD_BACK' : (first.error?.code ?? `HTTP_${first.status}`),
      message: `its request ${own.map((y) => `step ${y.stepId} ${describeExecution(y)} -> ${outcomeOf(y)}`).join(', ')} did not land`,
    };
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/**
 * What an execution wrote, as values to look keys up in: each row it left (or removed), each JSON
 * file it wrote, and the `key: value` lines of its text files, with the file's `path`.
 */
export function writtenValues(ctx: ValidatorContext, x: Execution): unknown[] {
  const out: unknown[] = x.rows.map((r) => r.after ?? r.before ?? {});
  for (const f of x.files) {
    const fields: Record<string, unknown> = { path: f.path };
    out.push(fields);
    if (f.after === undefined) continue;
    // Binary, oversized or its blob not stored: the path is all we know.
    const text = fileText(f.after, (sha) => ctx.recording.readBlob(sha));
    if (typeof text !== 'string') continue;
    const parsed = jsonOrText(text);
    if (typeof parsed !== 'string') out.push(parsed);
    else
      for (const line of text.split('\n')) {
        const m = /^\s*[-*]?\s*([A-Za-z][\w ]{0,40}?)\s*[:=]\s*(.+?)\s*$/.exec(line);
        if (m) fields[m[1]!.trim().toLowerCase().replace(/\s+/g, '_')] = m[2];
      }
  }
  return out;
}

/** Whether an execution shows a value under `key` (in what it sent or what it wrote). */
export function showsKey(ctx: ValidatorContext, x: Execution, key: string): boolean {
  return findKey(x.parameters, key).length > 0 || findKey(writtenValues(ctx, x), key).length > 0;
}
