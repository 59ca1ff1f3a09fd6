// Evidence Validator (Evidence Validity): every source the answer cites exists among the recorded
// observations (tool results, requested URLs); a citation nobody ever returned is fabricated.
import { round1 } from './required-field.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

const URL_RE = /https?:\/\/[^\s)\]>"']+/g;
/**
 * An explicit citation marker: `[ref: x]`, `[source: x]`, `[doc: x]`, `[cite: x]`. The prefix is what
 * makes brackets a citation: bracketed prose (`[You are a weather desk.]`), a markdown link's text,
 * a checkbox (`[x]`) are not.
 */
const REF_RE = /\[\s*(?:ref|source|doc|cite|citation)\s*:\s*([^\]]*[^\]\s])\s*\]/gi;
/** A numbered footnote marker in running text (`… was cloudy [2].`), not an index (`rows[2]`) or a link (`[2](…)`). */
const FOOTNOTE_RE = /(?<![\w\]])\[(\d{1,3})\](?![(:])/g;
/** An entry of the answer's own references list: a line that starts with `[n]`, `[n]:` or `[n].`. */
const ENTRY_RE = /^[ \t]*\[(\d{1,3})\][:.]?[ \t]+\S/gm;

/** The citations in an answer to check against the run's sources: URLs, `[ref: x]` markers, and the contract's patterns. */
export function citationsIn(answer: string, patterns: readonly string[] = []): string[] {
  const out = new Set<string>();
  for (const m of answer.match(URL_RE) ?? []) out.add(m.replace(/[.,;:]+$/, ''));
  for (const m of answer.matchAll(REF_RE)) out.add(m[1]!.trim());
  for (const p of patterns) for (const m of answer.matchAll(new RegExp(p, 'g'))) out.add(m[0]);
  return [...out];
}

/**
 * Numbered footnotes (`[n]`) are citations only when the answer has a references list (lines that
 * start with `[n]`): each marker must then have its entry (whose URLs and ids are checked as
 * citations). Without a list, `[1]` is as likely an index or a label, and is not read as a citation.
 */
export function footnotesIn(answer: string): { resolved: string[]; dangling: string[] } {
  const entries = new Set([...answer.matchAll(ENTRY_RE)].map((m) => m[1]!));
  if (entries.size === 0) return { resolved: [], dangling: [] };
  const body = answer.replace(ENTRY_RE, '');
  const markers = new Set([...body.matchAll(FOOTNOTE_RE)].map((m) => m[1]!));
  return {
    resolved: [...markers].filter((n) => entries.has(n)).map((n) => `[${n}]`),
    dangling: [...markers].filter((n) => !entries.has(n)).map((n) => `[${n}]`),
  };
}

export function evidenceValidator(ctx: ValidatorContext): ValidatorOutcome {
  const answer = ctx.trajectory.finalAnswer ?? '';
  const cites = citationsIn(answer, ctx.contract.evidence?.citation_patterns);
  const outputs = ctx.contract.success_criteria.required_outputs ?? [];
  const needsEvidence = outputs.includes('evidence_list') || outputs.includes('citations');
  const footnotes = footnotesIn(answer);
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  if (cites.length === 0 && footnotes.resolved.length === 0 && footnotes.dangling.length === 0) {
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
  const missing: string[] = [];
  for (const c of cites) {
    const where = ctx.trajectory.observations.find((o) => o.text.includes(c));
    if (where || requested.some((u) => u === c || u.startsWith(c)) || corpus.some((t) => t.includes(c))) {
      found++;
      refs.push({ kind: 'citation', ref: c, ...(where ? { stepId: where.stepId } : {}) });
    } else {
      missing.push(`"${c}" is cited but no recorded observation or request contains it`);
      refs.push({ kind: 'citation_not_found', ref: c });
      findings.push({
        code: 'FABRICATED_REFERENCE',
        hard: true,
        message: `cited "${c}" never appears in any recorded observation`,
      });
      findings.push({
        code: 'CITATION_NOT_FOUND',
        hard: true,
        message: `citation "${c}" not found among the run's sources`,
      });
    }
  }
  // Footnotes point into the answer's own references list, whose entries are checked above.
  for (const n of footnotes.resolved) {
    found++;
    refs.push({ kind: 'footnote', ref: n });
  }
  for (const n of footnotes.dangling) {
    missing.push(`footnote ${n} has no entry in the answer's references list`);
    refs.push({ kind: 'citation_not_found', ref: n });
    findings.push({
      code: 'CITATION_NOT_FOUND',
      hard: true,
      message: `footnote ${n} has no entry in the answer's references list`,
    });
  }
  const total = cites.length + footnotes.resolved.length + footnotes.dangling.length;
  const summary = `${found}/${total} cited sources found among the recorded observations`;
  return {
    validatorName: 'evidence',
    validatorType: 'evidence',
    metric: 'evidence_validity',
    score: round1((10 * found) / total),
    confidence: 0.9,
    findings,
    evidenceRefs: refs,
    // One line per citation not found, so the report names each (the CLI prints them one a line).
    message: [...missing, summary].join('; '),
  };
}
