// State validator: the hard state gate of the state-diff engine (expected world state, side effects) as a
// validator row, so state failures show in eval_validator_result beside the others.
import { changeObjectId } from '../../diff/index.js';
import { HARD_GATE_CODES } from '../codes.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

export function stateValidator(ctx: ValidatorContext): ValidatorOutcome {
  const s = ctx.state;
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  for (const x of s.expectations) {
    const stepId = x.steps.at(-1);
    if (x.passed) refs.push({ kind: 'expectation', ref: x.id, ...(stepId !== undefined ? { stepId } : {}) });
    else
      for (const code of x.codes)
        findings.push({
          code,
          hard: HARD_GATE_CODES.has(code) || ctx.forbiddenCodes.has(code),
          message: `${x.id}: ${x.message}`,
          ...(stepId !== undefined ? { stepId } : {}),
        });
  }
  for (const c of s.sideEffects) {
    const what =
      c.kind === 'file'
        ? `${c.op} ${c.path}`
        : c.kind === 'row'
          ? `${c.op} ${c.schema}.${c.table} ${JSON.stringify(c.key)}`
          : `${c.method} ${c.target}`;
    refs.push({ kind: 'side_effect', ref: changeObjectId(c), ...(c.stepId !== null ? { stepId: c.stepId } : {}) });
    if (s.sideEffectPolicy === 'fail')
      findings.push({
        code: 'UNAUTHORIZED_ACTION',
        hard: true,
        message: `side effect at step ${c.stepId ?? '?'}: ${what} was not asked for by the contract`,
        ...(c.stepId !== null ? { stepId: c.stepId } : {}),
      });
  }
  const present = s.expectations.filter((e) => e.wantsPresence);
  if (present.some((e) => e.passed) && present.some((e) => !e.passed))
    findings.push({
      code: 'PARTIAL_STATE_CHANGE',
      hard: true,
      message: 'only part of the expected state changes happened',
    });
  const warned =
    s.sideEffectPolicy === 'warn' && s.sideEffects.length > 0
      ? `; ${s.sideEffects.length} side effect(s) (policy warn)`
      : '';
  return {
    validatorName: 'state_diff',
    validatorType: 'state',
    score: Math.round(s.stateChangeScore * 10) / 10,
    confidence: 0.95,
    findings,
    evidenceRefs: refs,
    message:
      (findings.length === 0
        ? `${s.expectations.length} expectation(s) hold; ${s.changes.files.length} file, ${s.changes.rows.length} row, ${s.changes.requests.length} request change(s)`
        : findings.map((f) => f.message).join('; ')) + warned,
  };
}
