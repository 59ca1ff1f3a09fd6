// Claim-Fact Validator (Evidence Consistency): the key claims of the final answer (ids, numbers, names)
// are grounded in what the agent observed (tool results) or was told (the user's words).
import { idsIn, knowledgeAt, numbersIn } from '../trajectory.js';
import { round1 } from './required-field.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

export interface Claim {
  kind: 'id' | 'number' | 'name';
  text: string;
}

/** Key claims: identifiers, numbers >= 10 (small counts are not facts worth checking), and the contract's patterns. */
export function claimsIn(answer: string, patterns: readonly string[] = [], ignore: readonly string[] = []): Claim[] {
  const claims = new Map<string, Claim>();
  const skip = new Set(ignore);
  for (const id of idsIn(answer)) if (!skip.has(id)) claims.set(`id:${id}`, { kind: 'id', text: id });
  const idText = idsIn(answer).join(' ');
  for (const n of numbersIn(
    answer.replace(/(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*[A-Za-z0-9](?![\w-])/g, ' '),
  ))
    if (Math.abs(n) >= 10 && !skip.has(String(n)) && !idText.includes(String(n)))
      claims.set(`n:${n}`, { kind: 'number', text: String(n) });
  // Names: two or more capitalised words in a row, not counting a sentence's first word.
  for (const m of answer.matchAll(/(?:^|[.!?]\s+|(\s))((?:[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)+)/g)) {
    const words = m[2]!.split(/\s+/);
    const name = (m[1] === undefined ? words.slice(1) : words).join(' ');
    if (name.includes(' ') && !skip.has(name)) claims.set(`name:${name}`, { kind: 'name', text: name });
  }
  for (const p of patterns)
    for (const m of answer.matchAll(new RegExp(p, 'g')))
      if (!skip.has(m[0])) claims.set(`p:${m[0]}`, { kind: 'name', text: m[0] });
  return [...claims.values()];
}

export function claimFactValidator(ctx: ValidatorContext): ValidatorOutcome {
  const answer = ctx.trajectory.finalAnswer ?? '';
  const claims = claimsIn(answer, ctx.contract.claims?.patterns, ctx.contract.claims?.ignore);
  const known = knowledgeAt(ctx.trajectory);
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  let grounded = 0;
  for (const c of claims) {
    const ok = c.kind === 'number' ? known.numbers.has(Number(c.text)) : known.knowsId(c.text);
    if (ok) {
      grounded++;
      const where = ctx.trajectory.observations.find((o) => o.text.includes(c.text));
      refs.push({ kind: 'claim', ref: c.text, ...(where ? { stepId: where.stepId } : {}) });
    } else
      findings.push({
        code: 'UNSUPPORTED_CLAIM',
        hard: true,
        message: `the answer states ${c.kind} ${c.text}, which no observation or user message contains`,
      });
  }
  return {
    validatorName: 'claim_fact',
    validatorType: 'claim_fact',
    metric: 'evidence_consistency',
    score: claims.length === 0 ? 10 : round1((10 * grounded) / claims.length),
    confidence: claims.length === 0 ? 0.5 : 0.85,
    findings,
    evidenceRefs: refs,
    message:
      claims.length === 0
        ? 'no checkable key claims in the answer'
        : `${grounded}/${claims.length} key claims grounded in observations`,
  };
}
