// Evidence Validator (Evidence Validity): every source the answer cites exists among the recorded
// observations (tool results, requested URLs); a citation nobody ever returned is fabricated.
import { round1 } from './required-field.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

const URL_RE = /https?:\/\/[^\s)\]>"']+/g;
const REF_RE = /\[(?:ref|source|doc|cite)?:?\s*([^\]\s][^\]]*)\]/gi;

/** The citations in an answer: URLs, [ref: x] markers (not bare [1] numbers), and the contract's patterns. */
export function citationsIn(answer: string, patterns: readonly string[] = []): string[] {
  const out = new Set<string>();
  for (const m of answer.match(URL_RE) ?? []) out.add(m.replace(/[.,;:]+$/, ''));
  for (const m of answer.matchAll(REF_RE)) if (!/^\d+$/.test(m[1]!.trim())) out.add(m[1]!.trim());
  for (const p of patterns) for (const m of answer.matchAll(new RegExp(p, 'g'))) out.add(m[0]);
  return [...out];
}

export function evidenceValidator(ctx: ValidatorContext): ValidatorOutcome {
  const answer = ctx.trajectory.finalAnswer ?? '';
  const cites = citationsIn(answer, ctx.contract.evidence?.citation_patterns);
  const outputs = ctx.contract.success_criteria.required_outputs ?? [];
  const needsEvidence = outputs.includes('evidence_list') || outputs.includes('citations');
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  if (cites.length === 0) {
    if (needsEvidence) {
      const observed = ctx.trajectory.observations.length > 0;
      findings.push({
        code: observed ? 'MISSING_CITATION' : 'MISSING_EVIDENCE',
        hard: !observed,
        message: observed
          ? 'the task requires citations and the answer cites none'
          : 'the task requires evidence and the run observed none',
      });
    }
    return {
      validatorName: 'evidence',
      validatorType: 'evidence',
      metric: 'evidence_validity',
      score: findings.length > 0 ? 0 : 10,
      confidence: needsEvidence ? 0.9 : 0.5,
      findings,
      evidenceRefs: refs,
      message: findings.length > 0 ? findings[0]!.message : 'the answer cites no sources; nothing to verify',
    };
  }
  const corpus = ctx.trajectory.observations.map((o) => o.text);
  const requested = ctx.recording.events.flatMap((e) => (e.type === 'http.exchange' ? [e.payload.request.url] : []));
  let found = 0;
  for (const c of cites) {
    const where = ctx.trajectory.observations.find((o) => o.text.includes(c));
    if (where || requested.some((u) => u === c || u.startsWith(c)) || corpus.some((t) => t.includes(c))) {
      found++;
      refs.push({ kind: 'citation', ref: c, ...(where ? { stepId: where.stepId } : {}) });
    } else {
      findings.push({
        code: 'FABRICATED_REFERENCE',
        hard: true,
        message: `cited ${c} never appears in any recorded observation`,
      });
      findings.push({
        code: 'CITATION_NOT_FOUND',
        hard: true,
        message: `citation ${c} not found among the run's sources`,
      });
    }
  }
  return {
    validatorName: 'evidence',
    validatorType: 'evidence',
    metric: 'evidence_validity',
    score: round1((10 * found) / cites.length),
    confidence: 0.9,
    findings,
    evidenceRefs: refs,
    message: `${found}/${cites.length} cited sources found among the recorded observations`,
  };
}
