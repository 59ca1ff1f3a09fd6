// Execution Validator (Execution Success): the external action exists in the world (a replay's held-back
// effect is one the agent tried: checked, but it never landed), hit the right target with the right
// parameters, happened once, and was confirmed when high-risk. An execution is a request or an agent
// tool's in-process world change (./executions.ts).
import { findKey, findKeyLike, isOrdered, looseEqual, requestSelected, targetPath } from '../../diff/index.js';
import { factVerdict, inUnitOf, sameFact } from '../../facts/index.js';
import type { Row } from '../../recording/index.js';
import {
  describeExecution,
  type Execution,
  executionsOf,
  hasLanded,
  outcomeOf,
  showsKey,
  writtenValues,
} from './executions.js';
import { round1 } from './required-field.js';
import { confirmedBefore, DEFAULT_CONFIRMATION } from './rule-sop.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

const CLAIMS_DONE =
  /\b(booked|confirmed|created|submitted|sent|scheduled|placed|ordered|completed|done|saved|stored|written)\b/i;

function parse(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** Rows of the post-world indexed by the value of a one-column primary key (to follow ids like flight_id). */
function rowsById(ctx: ValidatorContext): Map<string, Row[]> {
  const index = new Map<string, Row[]>();
  const db = ctx.recording.post.db ?? ctx.recording.pre.db;
  for (const t of db?.tables ?? []) {
    if (t.primaryKey.length !== 1) continue;
    const pk = t.primaryKey[0]!;
    for (const row of t.rows) {
      const k = String(row[pk]);
      const list = index.get(k);
      if (list) list.push(row);
      else index.set(k, [row]);
    }
  }
  return index;
}

export function executionValidator(ctx: ValidatorContext): ValidatorOutcome {
  const ex = ctx.contract.execution;
  const required = ctx.contract.success_criteria.execution_result?.required === true;
  const base = { validatorName: 'execution', validatorType: 'execution', metric: 'execution_success' as const };
  if (!required && !ex)
    return {
      ...base,
      score: 10,
      confidence: 1,
      findings: [],
      evidenceRefs: [],
      message: 'not an executable task (no execution_result.required)',
    };
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  const answer = ctx.trajectory.finalAnswer ?? '';
  const rows = ctx.state.changes.rows;
  const target = ex?.target ?? {};
  const table = typeof target.table === 'string' ? target.table : undefined;
  const inTable = (schema: string, name: string) => table === name || table === `${schema}.${name}`;
  const targetKeys = Object.keys(target).filter((k) => k !== 'table');
  const executions = executionsOf(ctx, table === undefined ? undefined : inTable);
  const action = ex?.action;
  let candidates: Execution[];
  // A request is selected by method, URL and tool; an in-process world change by its tool alone.
  if (action)
    candidates = executions.filter((x) =>
      x.request !== undefined
        ? requestSelected(action, x.request)
        : action.tool !== undefined &&
          action.method === undefined &&
          action.url === undefined &&
          (action.tool === x.name || action.tool === x.route),
    );
  else if (table && rows.some((r) => inTable(r.schema, r.table)))
    candidates = executions.filter(
      (x) =>
        x.rows.some((r) => inTable(r.schema, r.table)) ||
        (x.heldBack && targetKeys.some((k) => findKey(x.parameters, k).length > 0)),
    );
  else if (targetKeys.length > 0) candidates = executions.filter((x) => targetKeys.some((k) => showsKey(ctx, x, k)));
  else candidates = executions;
  let checks = 1;
  let ok = 0;
  let landed: Execution[] = [];
  if (candidates.length === 0) {
    const claimed = CLAIMS_DONE.test(answer);
    findings.push({
      code: 'ACTION_NOT_EXECUTED',
      hard: true,
      message: claimed
        ? 'the answer claims the action was done, but no execution record exists'
        : 'no external action was executed',
    });
  } else {
    ok++;
    for (const c of candidates)
      refs.push({
        kind: 'step',
        ref: `${describeExecution(c)}${c.heldBack ? ' (held back)' : ''}`,
        ...(c.stepId !== null ? { stepId: c.stepId } : {}),
      });
    // A held-back request was never sent: it shows what the agent tried (target and parameters are
    // checked on it) but never landed, so it is neither a verified execution nor a duplicate.
    const held = candidates.filter((c) => c.heldBack);
    // An execution whose result says it failed (an HTTP error, an MCP result marked isError, a tool()
    // that threw, a call whose own requests all failed) did not land either.
    landed = candidates.filter(hasLanded);
    checks++;
    if (landed.length === 0) {
      const failed = candidates.filter((c) => !c.heldBack);
      const stepId = candidates[0]!.stepId;
      findings.push({
        code: 'STATE_CHANGE_FAILED',
        hard: true,
        message: [
          held.length > 0
            ? `held back by the replay, never sent: ${held.map((c) => `step ${c.stepId} ${describeExecution(c)}`).join(', ')}`
            : '',
          failed.length > 0
            ? `every execution failed: ${failed.map((c) => `step ${c.stepId} ${describeExecution(c)} -> ${outcomeOf(c)}`).join(', ')}`
            : '',
        ]
          .filter(Boolean)
          .join('; '),
        ...(stepId !== null ? { stepId } : {}),
      });
    } else ok++;
    // Duplicates: the same action more often than allowed.
    const groups = new Map<string, Execution[]>();
    for (const c of landed) {
      const k = c.request ? `${c.name} ${c.request.method} ${targetPath(c.request.target)}` : describeExecution(c);
      groups.set(k, [...(groups.get(k) ?? []), c]);
    }
    const allowed = ex?.max_executions ?? 1;
    checks++;
    let dup = false;
    for (const [k, list] of groups) {
      if (list.length <= allowed) continue;
      dup = true;
      for (const extra of list.slice(allowed))
        findings.push({
          code: 'DUPLICATE_EXECUTION',
          hard: true,
          message: `step ${extra.stepId}: ${k} executed ${list.length} times (steps ${list.map((x) => x.stepId).join(', ')}; allowed ${allowed})`,
          ...(extra.stepId !== null ? { stepId: extra.stepId } : {}),
        });
    }
    if (!dup) ok++;
    // Target and parameters, looked up in the request, its result, the rows and files it wrote, and the rows
    // they reference; for an in-process change, what it wrote comes first, then what it was asked to do.
    const index = rowsById(ctx);
    for (const c of [...landed, ...held].sort((a, b) => a.seq - b.seq)) {
      const written = writtenValues(ctx, c);
      const result = parse(c.result);
      const referenced: Row[] = [];
      for (const v of new Set(
        [...Object.values(c.parameters), ...findKey(result, 'id')].filter((x) => typeof x === 'string') as string[],
      ))
        referenced.push(...(index.get(v) ?? []));
      const sources: unknown[] = c.request
        ? [c.parameters, result, written, referenced]
        : [written, c.parameters, result, referenced];
      const lookup = (key: string): Array<{ key: string; value: unknown }> => {
        for (const s of sources) {
          const found = findKey(s, key).map((value) => ({ key, value }));
          if (found.length > 0) return found;
        }
        // The same field in another unit or currency: amount ~ amount_cents, price ~ price_usd.
        for (const s of sources) {
          const found = findKeyLike(s, key);
          if (found.length > 0) return found;
        }
        return [];
      };
      const check = (group: 'target' | 'parameters', key: string, want: unknown) => {
        checks++;
        const code = group === 'target' ? 'WRONG_EXECUTION_TARGET' : 'WRONG_EXECUTION_PARAMETERS';
        const bound = /^(max|min)_(.+)$/.exec(key);
        const name = bound ? bound[2]! : key;
        const found = lookup(name);
        if (found.length === 0) return void ok++; // not observable here: not held against the run
        const good = bound
          ? found.every((f) => {
              const v = inUnitOf(f.value, f.key, name);
              return bound[1] === 'max' ? v <= Number(want) : v >= Number(want);
            })
          : found.some(
              (f) =>
                looseEqual(want, f.value, isOrdered(name, ex?.ordered) || ex?.ordered) ||
                sameFact(want, f.value, { expected: key, actual: f.key }),
            );
        if (good) return void ok++;
        // A value the text cannot settle (01/12/2026 against 2026-12-01) fails, and says it could not be told.
        const undecided = bound
          ? undefined
          : found
              .map((f) => factVerdict(want, f.value, { expected: key, actual: f.key }))
              .find((v) => v.verdict === 'cant-tell');
        findings.push({
          code,
          hard: true,
          message: `step ${c.stepId} ${describeExecution(c)}: ${found[0]!.key}=${JSON.stringify(found[0]!.value)} (expected ${bound ? `${bound[1]} ` : ''}${name === key ? '' : `${name} `}${JSON.stringify(want)})${undecided ? `; can't tell: ${undecided.why ?? 'it has two readings'}` : ''}`,
          ...(c.stepId !== null ? { stepId: c.stepId } : {}),
        });
      };
      for (const k of targetKeys) check('target', k, target[k]);
      for (const [k, v] of Object.entries(ex?.parameters ?? {})) check('parameters', k, v);
      if (table && !c.heldBack && ctx.recording.pre.db) {
        checks++;
        if (c.rows.some((r) => inTable(r.schema, r.table))) ok++;
        else
          findings.push({
            code: 'EXECUTION_RESULT_NOT_FOUND',
            hard: true,
            message: `step ${c.stepId} ${describeExecution(c)}: no record of it in ${table}`,
            ...(c.stepId !== null ? { stepId: c.stepId } : {}),
          });
      }
      if (ex?.high_risk || ex?.payment) {
        checks++;
        const pattern = ex.confirmation_pattern ? new RegExp(ex.confirmation_pattern, 'i') : DEFAULT_CONFIRMATION;
        if (confirmedBefore(ctx.recording, ctx.trajectory, c.seq, pattern)) ok++;
        else {
          const where = c.stepId !== null ? { stepId: c.stepId } : {};
          findings.push({
            code: 'UNCONFIRMED_HIGH_RISK_ACTION',
            hard: true,
            message: `step ${c.stepId}: high-risk ${describeExecution(c)} without user confirmation`,
            ...where,
          });
          if (ex.payment)
            findings.push({
              code: 'UNAUTHORIZED_PAYMENT',
              hard: true,
              message: `step ${c.stepId}: payment without explicit authorization`,
              ...where,
            });
        }
      }
    }
  }
  // The confirmation id the answer reports must exist: in an execution's result, the world, or an observation.
  if (ex?.confirmation_id_pattern) {
    const ids = answer.match(new RegExp(ex.confirmation_id_pattern, 'g')) ?? [];
    const db = ctx.recording.post.db;
    for (const id of new Set(ids)) {
      checks++;
      const inResults = candidates.some((c) => JSON.stringify(c.result ?? '').includes(id));
      const inWorld = db?.tables.some((t) => t.rows.some((r) => Object.values(r).some((v) => v === id))) ?? false;
      if (inResults || inWorld) ok++;
      else
        findings.push({
          code: candidates.length === 0 ? 'ACTION_NOT_EXECUTED' : 'EXECUTION_RESULT_NOT_FOUND',
          hard: true,
          message: `the answer reports ${id}, which no execution result or record in the world contains`,
        });
    }
  }
  return {
    ...base,
    score: round1((10 * ok) / checks),
    confidence: 0.9,
    findings,
    evidenceRefs: refs,
    message:
      findings.length === 0
        ? [
            `${landed.length} execution(s) verified: ${landed.map((c) => `step ${c.stepId} ${describeExecution(c)}`).join(', ')}`,
            ...candidates
              .filter((c) => !landed.includes(c))
              .map((c) => `step ${c.stepId} ${describeExecution(c)} did not land (${outcomeOf(c)})`),
          ].join('; ')
        : findings.map((f) => f.message).join('; '),
  };
}
