// Required Field Validator (Completeness): the final answer, the required outputs and the must_include
// fields (and, for executable tasks, the execution fields) are present in what the agent returned.

import {
  changeDirection,
  FactIndex,
  FRAMED_KINDS,
  keyDirection,
  mentionsIn,
  sameFact,
  unitsPerMajor,
} from '../../facts/index.js';
import type { FieldSpec } from '../contract.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

const CITATION = /https?:\/\/[^\s)\]]+|\[[^\]\s][^\]]*\]/;
const STATUS_WORDS =
  /\b(booked|reserved|confirmed|created|submitted|sent|scheduled|placed|completed|done|cancell?ed|updated|deleted|failed|refunded|issued|paid|charged|approved|processed|shipped|resolved|closed|opened|saved|added|removed|rejected|declined)\b/i;

/** A field name as a label in free text: `trial_phase` matches "Trial phase", "trial-phase", "trialPhase". */
function labelPattern(name: string): RegExp {
  const words = name.split(/[_\s-]+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`\\b${words.join('[\\s_-]*')}\\b`, 'i');
}

function specMatch(spec: FieldSpec, text: string, name: string): string | undefined {
  if (typeof spec === 'string') return new RegExp(spec).exec(text)?.[0];
  if (spec.pattern) {
    const m = new RegExp(spec.pattern).exec(text)?.[0];
    if (m !== undefined) return m;
  }
  if (spec.any_of) {
    for (const v of spec.any_of) {
      const found = statedIn(text, v, name);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (spec.expected !== undefined) return statedIn(text, spec.expected, name);
  return undefined;
}

/**
 * Where `text` states `value` (found under `key`): as written at the start of a word (`refund` in
 * "refunded", never `us` in "status"), or in another form — `$1,299.00` for 1299, `Dec 3, 2026` for
 * 2026-12-03, `Shipped` for shipped, `o7731` for O-7731. Returns what the text wrote, or undefined.
 */
function statedIn(text: string, value: string | number | boolean, key: string): string | undefined {
  const written = String(value);
  if (written !== '' && wordStartIn(text, written)) return written;
  if (typeof value === 'boolean') return undefined;
  return answerFacts(text).groundValue(value, key)?.observed;
}

/** Whether `text` holds `part` where a word starts (or where `part` itself starts with no letter or digit). */
function wordStartIn(text: string, part: string): boolean {
  const glued = /^[\p{L}\p{N}]/u.test(part);
  for (let i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1))
    if (!glued || i === 0 || !/[\p{L}\p{N}]/u.test(text[i - 1]!)) return true;
  return false;
}

/** A field's expected value as one number (`3.2`, `"-3.2%"`, `"$1,200"`), or undefined. */
function expectedNumber(expected: string | number): number | undefined {
  if (typeof expected === 'number') return expected;
  const all = mentionsIn(expected);
  const [m] = all;
  return all.length === 1 && m!.text === expected.trim() && FRAMED_KINDS.has(m!.kind) ? m!.value : undefined;
}

/**
 * How the answer states a change whose direction the field's name or the expected value's sign
 * gives (`decline_pct: 3.2`, `loss_usd: 1200`, `change_pct: -3.2`): a mention of its size said that
 * way, or said no way under a name that says it (no evidence against) — else one said the other
 * way, wrong (`rose 3.2%` for `decline_pct`). Undefined when nothing gives a direction or no
 * mention states the size: the field is looked for as any other.
 */
function statedChange(
  text: string,
  expected: string | number,
  key: string,
): { found: string; wrong?: string } | undefined {
  const value = expectedNumber(expected);
  const want = value === undefined ? undefined : changeDirection(value, key);
  if (value === undefined || want === undefined) return undefined;
  const named = keyDirection(key) === want;
  let wrong: { found: string; wrong: string } | undefined;
  for (const m of mentionsIn(text)) {
    if (m.value === undefined || !FRAMED_KINDS.has(m.kind)) continue;
    if (answerFacts(m.text.replace(/^[-−+]\s*/, '')).groundValue(Math.abs(value), key) === undefined) continue;
    const way = want === 'down' ? 'fall' : 'rise';
    const why = named ? `the field names a ${way}` : `expected ${value}, a ${way}`;
    if (m.negated === true) {
      // `did not fall 3.2%` denies the change the field expects; denying the other way states nothing.
      if (m.direction === want && wrong === undefined)
        wrong = { found: m.text, wrong: `${key}: the answer says ${m.text} did not go ${want}, but ${why}` };
      continue;
    }
    // A sign written is a direction too (`-3.2%`, `+3.2%`).
    const plus = m.text.startsWith('+') || text[m.start - 1] === '+';
    const said = m.direction ?? (m.value < 0 ? 'down' : plus ? 'up' : undefined);
    if (said === want || (said === undefined && (named || want === 'up'))) return { found: m.text };
    if (said !== undefined && wrong === undefined)
      wrong = { found: m.text, wrong: `${key}: the answer says ${m.text} went ${said}, but ${why}` };
  }
  return wrong;
}

/**
 * Where a required name shows in the answer: the matched text, or undefined. `how` says what was
 * looked for; `wrong` why the value found is not the field's expected one.
 */
export function findField(
  ctx: ValidatorContext,
  name: string,
  answer: string,
): { found?: string; how: string; confident: boolean; wrong?: string } {
  const spec = ctx.contract.fields?.[name];
  if (spec !== undefined) {
    const how = `fields.${name}`;
    const expected = typeof spec === 'object' ? spec.expected : undefined;
    if (expected === undefined) {
      const found = specMatch(spec, answer, name);
      return { ...(found !== undefined ? { found } : {}), how, confident: true };
    }
    const change = statedChange(answer, expected, name);
    if (change !== undefined) return { ...change, how, confident: true };
    const found = specMatch(spec, answer, name);
    if (found === undefined) return { how, confident: true };
    const wrong = sameFact(expected, found) ? undefined : `${name} is ${found}, expected ${expected}`;
    return { found, how, confident: true, ...(wrong !== undefined && { wrong }) };
  }
  const ex = ctx.contract.execution;
  const pick = (re: RegExp | undefined, how: string) => {
    const found = re?.exec(answer)?.[0];
    return { ...(found !== undefined ? { found } : {}), how, confident: true };
  };
  switch (name) {
    case 'final_answer':
      return answer.trim()
        ? { found: answer.slice(0, 40), how: 'a non-empty final answer', confident: true }
        : { how: 'a non-empty final answer', confident: true };
    case 'citations':
    case 'evidence_list':
      return pick(CITATION, 'a URL or [reference]');
    case 'confirmation_id':
      if (ex?.confirmation_id_pattern)
        return pick(new RegExp(ex.confirmation_id_pattern), `execution.confirmation_id_pattern`);
      break;
    case 'execution_status':
      return pick(STATUS_WORDS, 'a status word (booked, confirmed, created, refunded, issued, sent...)');
    case 'execution_target':
    case 'execution_parameters': {
      const spec = (name === 'execution_target' ? ex?.target : ex?.parameters) ?? {};
      const values: Array<{ value: string | number; key?: string }> = [];
      const bounds: Array<{ op: string; limit: number; key: string }> = [];
      for (const [k, v] of Object.entries(spec)) {
        const b = /^(max|min)_(.+)$/.exec(k);
        if (b && typeof v === 'number') bounds.push({ op: b[1]!, limit: v, key: b[2]! });
        else if (k !== 'table' && (typeof v === 'string' || typeof v === 'number'))
          values.push({ value: v, key: k }, ...entityValues(ctx, String(v)).map((value) => ({ value })));
      }
      if (values.length > 0 || bounds.length > 0) {
        // The answer may restate a value in another form: 12999 (amount_cents) as "$129.99".
        const said = answerFacts(answer);
        let found: string | undefined;
        for (const v of values) {
          found = said.groundValue(v.value, v.key)?.observed;
          if (found !== undefined) break;
        }
        if (found === undefined && bounds.length > 0)
          found = mentionsIn(answer).find((m) => {
            if (m.value === undefined || m.kind === 'date' || m.kind === 'id' || Math.abs(m.value) < 10) return false;
            return bounds.every((b) => {
              // A bound in cents or millionths holds an amount the answer states in dollars.
              const n = m.kind === 'money' ? m.value! * unitsPerMajor(b.key) : m.value!;
              return b.op === 'max' ? n <= b.limit : n >= b.limit;
            });
          })?.text;
        const how = [
          values.length > 0 ? `one of ${values.map((v) => v.value).join(', ')}` : '',
          ...bounds.map((b) => `a number ${b.op} ${b.limit}`),
        ]
          .filter(Boolean)
          .join(' or ');
        return {
          ...(found !== undefined ? { found } : {}),
          how: `${how} (execution.${name.slice(10)})`,
          confident: true,
        };
      }
      break;
    }
  }
  const label = labelPattern(name);
  const m = label.exec(answer);
  return { ...(m ? { found: m[0] } : {}), how: `the label "${name}"`, confident: false };
}

/** Text attributes of the entity an id names (a post-world row whose one-column primary key is the id). */
function entityValues(ctx: ValidatorContext, id: string): string[] {
  const out: string[] = [];
  for (const t of ctx.recording.post.db?.tables ?? []) {
    if (t.primaryKey.length !== 1) continue;
    const row = t.rows.find((r) => String(r[t.primaryKey[0]!]) === id);
    if (row)
      for (const v of Object.values(row))
        if (typeof v === 'string' && v !== id && /[A-Za-z]/.test(v) && v.length >= 3) out.push(v);
  }
  return out;
}

export function requiredFieldValidator(ctx: ValidatorContext): ValidatorOutcome {
  const sc = ctx.contract.success_criteria;
  const answer = ctx.trajectory.finalAnswer;
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  let checks = 0;
  let ok = 0;
  let confident = true;
  const finalStep = ctx.trajectory.modelSteps.at(-1)?.stepId;
  if (answer === undefined) {
    findings.push({ code: 'MISSING_FINAL_ANSWER', hard: true, message: 'the run produced no final answer' });
    return {
      validatorName: 'required_field',
      validatorType: 'required_field',
      metric: 'completeness',
      score: 0,
      confidence: 1,
      findings,
      evidenceRefs: [],
      message: 'no final answer: nothing to check',
    };
  }
  if (!answer.trim())
    findings.push({ code: 'EMPTY_OR_INVALID_OUTPUT', hard: true, message: 'the final answer is empty' });
  const check = (name: string, code: string, group: string) => {
    checks++;
    // An empty answer is already EMPTY_OR_INVALID_OUTPUT; not also a missing one.
    if (name === 'final_answer' && !answer.trim()) return;
    const r = findField(ctx, name, answer);
    if (!r.confident) confident = false;
    if (r.found !== undefined) {
      ok++;
      refs.push({
        kind: 'field',
        ref: `${group}.${name}=${r.found}`,
        ...(finalStep !== undefined ? { stepId: finalStep } : {}),
      });
      if (r.wrong !== undefined) findings.push({ code: 'WRONG_FACT', hard: true, message: r.wrong });
    } else
      findings.push({
        code,
        hard: true,
        message: `${group}: ${name} missing from the final answer (looked for ${r.how})`,
      });
  };
  for (const name of sc.required_outputs ?? [])
    check(name, name === 'final_answer' ? 'MISSING_FINAL_ANSWER' : 'MISSING_REQUIRED_OUTPUT', 'required_outputs');
  for (const name of sc.must_include ?? []) check(name, 'MISSING_REQUIRED_FIELD', 'must_include');
  if (sc.execution_result?.required)
    for (const name of sc.execution_result.must_include ?? [])
      check(name, 'MISSING_REQUIRED_FIELD', 'execution_result.must_include');
  for (const name of [...(sc.must_not_include ?? []), ...(sc.execution_result?.must_not_include ?? [])]) {
    if (ctx.forbiddenCodes.has(name.toUpperCase())) continue;
    checks++;
    const spec = ctx.contract.fields?.[name];
    // A text the answer must not contain, in any case or form (`Password` for password).
    const hit = spec !== undefined ? specMatch(spec, answer, name) : statedIn(answer, name, name);
    if (hit !== undefined)
      findings.push({
        code: 'OUTPUT_FORMAT_INVALID',
        hard: true,
        message: `must_not_include: the answer contains ${hit}`,
      });
    else ok++;
  }
  const score = checks === 0 ? 10 : (10 * ok) / checks;
  return {
    validatorName: 'required_field',
    validatorType: 'required_field',
    metric: 'completeness',
    score: round1(score),
    confidence: confident ? 0.95 : 0.7,
    findings,
    evidenceRefs: refs,
    message:
      findings.length === 0
        ? `all ${checks} required outputs and fields present`
        : findings.map((f) => f.message).join('; '),
  };
}

/** The facts the answer states, indexed (the answer is short; built per lookup group). */
function answerFacts(answer: string): FactIndex {
  const index = new FactIndex();
  index.add(answer, { pos: 0, label: 'the final answer' });
  return index;
}

export function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
