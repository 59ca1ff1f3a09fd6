// Claim-Fact Validator (Evidence Consistency): the key claims of the final answer (ids, numbers,
// amounts, percentages, quantities, dates, names) are grounded in what the agent observed (tool
// results) or was told (the user's words) — in any form they may be restated in: 12999 cents as
// "$129.99", 0.25 as "25%", an ISO timestamp as "Nov 20", O-7731 as "o7731".
import { type FactMatch, type Mention, type MentionKind, mentionsIn, type Verdict } from '../../facts/index.js';
import { factsOf } from '../trajectory.js';
import { round1 } from './required-field.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './types.js';

export interface Claim {
  kind: 'id' | 'number' | 'amount' | 'percentage' | 'quantity' | 'date' | 'time' | 'name' | 'availability';
  text: string;
}

const KIND: Record<MentionKind, Claim['kind']> = {
  id: 'id',
  number: 'number',
  money: 'amount',
  percent: 'percentage',
  unit: 'quantity',
  date: 'date',
  time: 'time',
};

interface ClaimFound extends Claim {
  /** Same (grounded), different (no observation states it), or can't tell (the text or the world does not settle it). */
  ground(): Verdict;
  /** Why the claim cannot be read as one fact (then it is grounded by nothing). */
  ambiguous?: string;
  /** A change said the wrong way: the observation that has it the other way (`fell 3.2%` against `change: 3.2`). */
  opposite?: () => FactMatch | undefined;
  direction?: 'up' | 'down';
  /** The answer says the change in `direction` did not happen (`did not fall 3.2%`). */
  negated?: true;
  /** An amount's mentions in the answer (where a total worked out from others is looked for). */
  mentions?: Mention[];
}

/** Said of an amount worked out by adding others up, within its line (`Total: $140.39`, `= $140.39`, `$140.39 in all`). */
const SUM_WORDS = /\b(?:total(?:s|l?ing)?|sum|subtotal|altogether|in all|combined|comes? to|all in)\b|=/i;
/** Said of an amount worked out as the gap between two others (`you save $20`, `$20 cheaper`). */
const GAP_WORDS =
  /\b(?:sav(?:e|es|ed|ing|ings)|difference|cheaper|less|more|discount|off|refund(?:ed)?|remain(?:s|ing|der)?|keeps?|kept|left over|the rest|balance)\b/i;
/** The amounts a total is looked for among, at most (their subsets are tried). */
const MAX_TERMS = 10;
/** Amounts of one answer looked at as worked out, at most: the check stays linear in a long answer. */
const MAX_WORKED_OUT = 100;

/** The words around a claim that speak of it: within its sentence (`Refunded $89.99. Shipping was $25.00.`: not a refund). */
function sentenceTail(text: string): string {
  const last = [...text.matchAll(/[.!?;](?=\s)/g)].at(-1);
  return last === undefined ? text : text.slice(last.index + 1);
}

function sentenceHead(text: string): string {
  const end = text.search(/[.!?;](?=\s|$)/);
  return end < 0 ? text : text.slice(0, end);
}

/**
 * An amount the answer works out from amounts it states that are grounded (`fare $129.99 + tax
 * $10.40 = $140.39`, `Total: $140.39`, `you save $20.00 ($219 vs $239)`), said so by the words
 * around it on its line: the sum of two or more of them, or the gap between two, in the same
 * currency, to the cent. What the agent computed from what it saw is grounded in what it saw; a
 * bare amount that merely equals some sum is not (nothing says it is one).
 */
function workedOut(claim: Mention, grounded: readonly Mention[], answer: string): string | undefined {
  const lineStart = answer.lastIndexOf('\n', claim.start - 1) + 1;
  const lineEnd = answer.indexOf('\n', claim.end);
  const before = sentenceTail(answer.slice(Math.max(lineStart, claim.start - 60), claim.start));
  const after = sentenceHead(answer.slice(claim.end, Math.min(lineEnd < 0 ? answer.length : lineEnd, claim.end + 24)));
  const around = `${before} ${after}`;
  const value = claim.value;
  if (value === undefined || !Number.isFinite(value)) return undefined;
  const sameCurrency = (m: Mention) =>
    (m.currencies ?? []).join() === (claim.currencies ?? []).join() ||
    (m.currencies ?? []).some((c) => claim.currencies?.includes(c));
  const terms = grounded
    .filter((m) => m.start !== claim.start && m.value !== undefined && sameCurrency(m))
    .slice(0, MAX_TERMS);
  const cents = (n: number) => Math.round(n * 100);
  const target = cents(value);
  if (SUM_WORDS.test(around))
    for (let set = 1; set < 1 << terms.length; set++) {
      if ((set & (set - 1)) === 0) continue; // two terms at least
      let sum = 0;
      const used: Mention[] = [];
      for (let i = 0; i < terms.length; i++)
        if (set & (1 << i)) {
          sum += cents(terms[i]!.value as number);
          used.push(terms[i]!);
        }
      if (sum === target) return used.map((m) => m.text).join(' + ');
    }
  if (GAP_WORDS.test(around))
    for (const a of terms)
      for (const b of terms)
        if (a !== b && cents(a.value as number) - cents(b.value as number) === target && target > 0)
          return `${a.text} - ${b.text}`;
  return undefined;
}

/**
 * A percentage the answer works out from two amounts it states that observations ground: the share
 * one is of the other (`$89.99, about 78% of your $114.99 order`), or the gap between them as a share
 * of the second (`$219 is 8% less than $239`), said so by the words after it (`of`) or around it
 * (less, more, off, saving…), to the percentage's written rounding or its hedge.
 */
function workedOutShare(claim: Mention, grounded: readonly Mention[], answer: string): string | undefined {
  const pct = claim.claim.filter((r) => r.dim === 'pct' && r.value !== undefined);
  if (pct.length === 0) return undefined;
  const lineStart = answer.lastIndexOf('\n', claim.start - 1) + 1;
  const lineEnd = answer.indexOf('\n', claim.end);
  const after = sentenceHead(answer.slice(claim.end, Math.min(lineEnd < 0 ? answer.length : lineEnd, claim.end + 24)));
  const around = `${sentenceTail(answer.slice(Math.max(lineStart, claim.start - 60), claim.start))} ${after}`;
  const share = /^\s*of\b/i.test(after);
  const gap = GAP_WORDS.test(around);
  if (!share && !gap) return undefined;
  // Said with a direction (`8% less`), the gap's sign must be it: the first amount against the second.
  const fits = (x: number) =>
    pct.some(
      (r) => Math.abs((claim.direction === undefined ? Math.abs(x) : x) - r.value!) <= (r.tolerance ?? 0) + 1e-9,
    );
  const terms = grounded.filter((m) => m.value !== undefined && m.value !== 0).slice(0, MAX_TERMS);
  for (const a of terms)
    for (const b of terms) {
      if (a === b || (a.currencies ?? []).join() !== (b.currencies ?? []).join()) continue;
      const [x, y] = [Math.abs(a.value!), Math.abs(b.value!)];
      if (share && fits((100 * x) / y)) return `${a.text} / ${b.text}`;
      if (gap && fits((100 * (x - y)) / y)) return `(${a.text} - ${b.text}) / ${b.text}`;
    }
  return undefined;
}

/**
 * Key claims: every fact the answer mentions (plain numbers only from 10 up: small counts are not
 * facts worth checking), names (two or more capitalised words), and the contract's patterns.
 */
function claimsOf(ctx: ValidatorContext, answer: string): ClaimFound[] {
  const index = factsOf(ctx.trajectory);
  const skip = new Set(ctx.contract.claims?.ignore ?? []);
  const claims = new Map<string, ClaimFound>();
  // Relative dates (`tomorrow`, `in 3 days`) are read against the run's day; with none, unread.
  const mentions = mentionsIn(answer, ctx.trajectory.day === undefined ? {} : { day: ctx.trajectory.day });
  for (const m of mentions) {
    if (skip.has(m.text)) continue;
    // A change the answer denies (`did not fall 3.2%`) states nothing to ground; an observation of it refutes it.
    if (m.negated === true && m.direction !== undefined) {
      const denied = index.oppositeOf(m);
      if (denied !== undefined)
        claims.set(`denied:${m.start}`, {
          kind: KIND[m.kind],
          text: m.text,
          ground: () => ({ verdict: 'different' }),
          opposite: () => denied,
          direction: m.direction,
          negated: true,
        });
      continue;
    }
    if (m.unread !== undefined) continue;
    if (m.kind === 'number' && Math.abs(m.value ?? 0) < 10) continue;
    const kind = KIND[m.kind];
    const key = `${kind}:${m.text}`;
    const known = claims.get(key);
    if (known?.mentions !== undefined) {
      known.mentions.push(m);
      continue;
    }
    claims.set(key, {
      kind,
      text: m.text,
      ground: () => index.verdict(m),
      ...(m.direction !== undefined && { direction: m.direction, opposite: () => index.oppositeOf(m) }),
      ...(m.ambiguous !== undefined && { ambiguous: m.ambiguous }),
      ...((kind === 'amount' || kind === 'percentage') && { mentions: [m] }),
    });
  }
  // Names: two or more capitalised words in a row (any script's letters: Zoë Müller), not counting a sentence's first word.
  for (const m of answer.matchAll(/(?:^|[.!?]\s+|(\s))((?:\p{Lu}\p{Ll}+)(?:\s+\p{Lu}\p{Ll}+)+)/gu)) {
    const words = m[2]!.split(/\s+/);
    const name = (m[1] === undefined ? words.slice(1) : words).join(' ');
    // Words a fact is written with are read with it (`3:00 AM Eastern Time`), not as a name.
    const at = m.index + m[0].length - name.length;
    if (mentions.some((f) => f.start <= at && at < f.end)) continue;
    if (name.includes(' ') && !skip.has(name))
      claims.set(`name:${name}`, { kind: 'name', text: name, ground: () => verdictOf(index.groundPhrase(name)) });
  }
  // Availability ("Hotel Lumen is sold out", "3 rooms left"), only where the sentence names an observed object.
  for (const s of index.stockVerdicts(answer))
    if (!skip.has(s.text))
      claims.set(`availability:${s.start}`, {
        kind: 'availability',
        text: `${s.subject}: ${s.text}`,
        ground: () => s.verdict,
      });
  for (const p of ctx.contract.claims?.patterns ?? [])
    for (const m of answer.matchAll(new RegExp(p, 'g')))
      if (!skip.has(m[0]))
        claims.set(`p:${m[0]}`, { kind: 'name', text: m[0], ground: () => verdictOf(index.groundText(m[0])) });
  return [...claims.values()];
}

function verdictOf(match: FactMatch | undefined): Verdict {
  return match === undefined ? { verdict: 'different' } : { verdict: 'same', match };
}

export function claimFactValidator(ctx: ValidatorContext): ValidatorOutcome {
  const answer = ctx.trajectory.finalAnswer ?? '';
  const claims = claimsOf(ctx, answer);
  const findings: Finding[] = [];
  const refs: EvidenceRef[] = [];
  let grounded = 0;
  let undecided = 0;
  const verdicts = claims.map((c) => c.ground());
  // The amounts the answer states that observations ground: what a total it works out may add up.
  const groundedAmounts = claims.flatMap((c, i) =>
    verdicts[i]!.verdict === 'same' && c.kind === 'amount' ? (c.mentions ?? []) : [],
  );
  let tries = MAX_WORKED_OUT;
  for (const [i, c] of claims.entries()) {
    const v = verdicts[i]!;
    const from =
      v.verdict === 'different' && c.ambiguous === undefined && c.mentions !== undefined && tries-- > 0
        ? c.mentions
            .slice(0, 4)
            .map((m) =>
              c.kind === 'percentage'
                ? workedOutShare(m, groundedAmounts, answer)
                : workedOut(m, groundedAmounts, answer),
            )
            .find((f) => f !== undefined)
        : undefined;
    if (from !== undefined) {
      grounded++;
      refs.push({ kind: 'claim', ref: `${c.text} = ${from} (worked out in the answer)` });
      continue;
    }
    if (v.verdict === 'same') {
      grounded++;
      const ref = v.match.observed === c.text ? c.text : `${c.text} = ${v.match.observed}`;
      refs.push({
        kind: 'claim',
        ref: `${ref} (${v.match.source.label})`,
        ...(v.match.source.stepId !== undefined ? { stepId: v.match.source.stepId } : {}),
      });
    } else if (v.verdict === 'cant-tell') {
      // Neither grounded nor refuted: said plainly, and it lowers the score without failing the gate.
      undecided++;
      findings.push({
        code: 'LOW_CONFIDENCE_EVALUATION',
        hard: false,
        message: `can't tell whether the answer's ${c.kind} ${c.text} is right: ${v.why}`,
      });
    } else if (c.opposite?.() !== undefined) {
      const other = c.opposite()!;
      findings.push({
        code: 'CONTRADICTED_BY_EVIDENCE',
        hard: true,
        message:
          c.negated === true
            ? `the answer says ${c.text} did not go ${c.direction}, but ${other.observed} (${other.source.label}) has it so`
            : `the answer says ${c.text} went ${c.direction}, but ${other.observed} (${other.source.label}) has it the other way`,
      });
    } else if (c.kind === 'availability')
      // An availability claim is made only about an object observed with its availability: refuted by it.
      findings.push({
        code: 'CONTRADICTED_BY_EVIDENCE',
        hard: true,
        message: `the answer says ${c.text}, but ${v.why ?? 'the observations say otherwise'}`,
      });
    else
      findings.push({
        code: 'UNSUPPORTED_CLAIM',
        hard: true,
        message:
          c.ambiguous === undefined
            ? `the answer states ${c.kind} ${c.text}, which no observation or user message contains in any form`
            : `the answer states ${c.kind} ${c.text}, which is ambiguous (${c.ambiguous}) and so is not grounded`,
      });
  }
  return {
    validatorName: 'claim_fact',
    validatorType: 'claim_fact',
    metric: 'evidence_consistency',
    score: claims.length === 0 ? 10 : round1((10 * (grounded + undecided / 2)) / claims.length),
    confidence: claims.length === 0 ? 0.5 : 0.85,
    findings,
    evidenceRefs: refs,
    message:
      claims.length === 0
        ? 'no checkable key claims in the answer'
        : `${grounded}/${claims.length} key claims grounded in observations${undecided > 0 ? `, ${undecided} undecided` : ''}`,
  };
}
