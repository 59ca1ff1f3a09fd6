// Built-in predicate "claims": every state change the agent claims in its text exists in the world.

import { changedTexts } from '../../diff/index.js';
import { FactIndex, idTokens } from '../../facts/index.js';
import { factsOfBelief } from '../belief.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';
import { listSteps } from '../view.js';

/** Past-tense verbs by which an agent claims it changed the world. */
const CLAIM_VERB =
  /\b(booked|reserved|created|cancell?ed|updated|deleted|removed|saved|wrote|written|confirmed|refunded|charged|sent|added|scheduled|changed|modified|inserted|recorded|registered|placed|purchased|issued|paid|rebooked|submitted)\b/i;
/** Words before the verb that turn a claim into a denial, a plan or a question. */
const NOT_A_CLAIM =
  /\b(not|no|never|unable|failed|fail|cannot|can't|couldn't|didn't|wasn't|weren't|haven't|hasn't|won't|will|would|should|shall|going to|let me|i'll|if|whether|once|before|until|please)\b/i;

/** A sentence in which the agent says it changed something. */
export interface StateClaim {
  sentence: string;
  verb: string;
  ids: string[];
}

/** The state-change claims in a text. */
export function stateClaims(text: string): StateClaim[] {
  const out: StateClaim[] = [];
  for (const raw of text.split(/(?<=[.!?;])\s+|\n+/)) {
    const sentence = raw.trim();
    if (!sentence || sentence.endsWith('?')) continue;
    const match = CLAIM_VERB.exec(sentence);
    if (!match) continue;
    if (NOT_A_CLAIM.test(sentence.slice(0, match.index))) continue;
    out.push({ sentence, verb: match[0].toLowerCase(), ids: idTokens(sentence) });
  }
  return out;
}

/** The first claim in the prefix that the world at the step it was settled does not bear out. */
export function checkClaims(input: PredicateInput): PredicateResult {
  const { belief, recording } = input;
  if (belief.claims.length === 0) return { verdict: 'good' };
  // The last step each step requested (its tool calls), found once: searching every step per
  // claim made bisect quadratic (72 of 92 s at 100k steps).
  const lastRequested = new Map<number, number>();
  for (const s of listSteps(recording)) {
    if (s.parentStepId !== undefined && s.step > (lastRequested.get(s.parentStepId) ?? 0))
      lastRequested.set(s.parentStepId, s.step);
  }
  const pre = input.worldAt(0);
  // A recording that captured no world (no files, no database: an agent whose world is a remote API)
  // holds no change to compare a claim with. Its world's word is then what the completed mutating
  // calls answered (POST /tickets → 201 {"id":"T-9"}): that bears a claim out. With a world captured,
  // the world alone does (a tool may say it booked what no row holds).
  const noWorld = recording.pre.fs === undefined && recording.pre.db === undefined;
  for (const claim of belief.claims) {
    // A claim made alongside tool calls is judged once the steps it requested have run.
    const settle = Math.max(claim.step, lastRequested.get(claim.step) ?? 0);
    if (settle > input.step) continue;
    const claims = stateClaims(claim.text);
    if (claims.length === 0) continue;
    // The changed files' words too, blob-backed ones read through the recording (one home with eval).
    const changed = changedTexts(pre, input.worldAt(settle), recording);
    if (noWorld) {
      for (const a of belief.actions)
        if (a.mutating && a.completed && a.step <= settle) changed.push(`${a.route ?? a.name} ${a.result}`);
    }
    const inChanges = new FactIndex();
    for (const text of changed) inChanges.add(text, { pos: 0, label: 'a change' });
    for (const c of claims) {
      const missing = c.ids.filter((id) => inChanges.groundId(id) === undefined);
      if (c.ids.length === 0 && changed.length === 0) {
        return {
          verdict: 'bad',
          violationStep: claim.step,
          reason: noWorld
            ? `step ${claim.step} claims "${short(c.sentence)}" but no mutating call had completed by step ${settle} (the recording captured no files or database)`
            : `step ${claim.step} claims "${short(c.sentence)}" but nothing in the world had changed by step ${settle}`,
        };
      }
      // An id named in the claim that neither the changed world nor anything the agent saw mentions is invented.
      const seen = factsOfBelief(belief);
      const invented = missing.filter((id) => seen.groundId(id) === undefined);
      if (c.ids.length > 0 && (missing.length === c.ids.length || invented.length > 0)) {
        const named = invented.length > 0 ? invented : missing;
        return {
          verdict: 'bad',
          violationStep: claim.step,
          reason: `step ${claim.step} claims "${short(c.sentence)}" but no ${noWorld ? 'completed mutating call' : 'row or file changed'} by step ${settle} mentions ${named.map((m) => JSON.stringify(m)).join(', ')}${noWorld ? ' (the recording captured no files or database)' : ''}`,
        };
      }
    }
  }
  return { verdict: 'good' };
}

function short(text: string, max = 140): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export const claims: StepPredicate = { name: 'claims', evaluate: checkClaims };
