// The seed's failure codes (000 §6), the five trajectory failure classes (001 §6.5), and the precedence that
// picks the primary failure reason.

export const FAILURE_CODES = [
  'MISSING_FINAL_ANSWER',
  'MISSING_REQUIRED_OUTPUT',
  'MISSING_REQUIRED_FIELD',
  'OUTPUT_FORMAT_INVALID',
  'EMPTY_OR_INVALID_OUTPUT',
  'MISSING_EVIDENCE',
  'MISSING_CITATION',
  'CITATION_NOT_FOUND',
  'FABRICATED_REFERENCE',
  'EVIDENCE_SOURCE_INACCESSIBLE',
  'UNSUPPORTED_CLAIM',
  'CLAIM_EVIDENCE_MISMATCH',
  'CONTRADICTED_BY_EVIDENCE',
  'WRONG_FACT',
  'INCOMPLETE_ANSWER',
  'LOW_COMPLETENESS_SCORE',
  'LOW_EVIDENCE_VALIDITY_SCORE',
  'LOW_EVIDENCE_CONSISTENCY_SCORE',
  'LOW_METHODOLOGY_SCORE',
  'LOW_READABILITY_SCORE',
  'SOP_NOT_FOLLOWED',
  'SYSTEM_PROMPT_VIOLATION',
  'SKILL_INSTRUCTION_VIOLATION',
  'UNAUTHORIZED_ACTION',
  'STATE_MISMATCH',
  'STATE_CHANGE_FAILED',
  'PARTIAL_STATE_CHANGE',
  'TOOL_FAILURE',
  'TOOL_TIMEOUT',
  'EXECUTION_TIMEOUT',
  'EVALUATOR_FAILURE',
  'LOW_CONFIDENCE_EVALUATION',
  'UNKNOWN_FAILURE',
  'ACTION_NOT_EXECUTED',
  'EXECUTION_RESULT_NOT_FOUND',
  'WRONG_EXECUTION_TARGET',
  'WRONG_EXECUTION_PARAMETERS',
  'DUPLICATE_EXECUTION',
  'UNCONFIRMED_HIGH_RISK_ACTION',
  'UNAUTHORIZED_PAYMENT',
] as const;

export type FailureCode = (typeof FAILURE_CODES)[number];

export function isFailureCode(code: string): code is FailureCode {
  return (FAILURE_CODES as readonly string[]).includes(code);
}

/** Written as a code is (UNSUPPORTED_CLAIM): capitals, digits and underscores, two words or more. */
export const CODE_LIKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;

/**
 * Codes that fail the hard gate (000 §4.1): a missing answer, outputs or fields; fabricated or
 * unsupported evidence; unauthorized, unreal, wrong, duplicate or unconfirmed execution; a state gate miss.
 * Everything else lowers the soft score. A contract's must_not_include adds codes to this set.
 */
export const HARD_GATE_CODES: ReadonlySet<string> = new Set<FailureCode>([
  'MISSING_FINAL_ANSWER',
  'EMPTY_OR_INVALID_OUTPUT',
  'MISSING_REQUIRED_OUTPUT',
  'MISSING_REQUIRED_FIELD',
  'MISSING_EVIDENCE',
  'CITATION_NOT_FOUND',
  'FABRICATED_REFERENCE',
  'UNSUPPORTED_CLAIM',
  'CONTRADICTED_BY_EVIDENCE',
  'UNAUTHORIZED_ACTION',
  'UNAUTHORIZED_PAYMENT',
  'ACTION_NOT_EXECUTED',
  'EXECUTION_RESULT_NOT_FOUND',
  'WRONG_EXECUTION_TARGET',
  'WRONG_EXECUTION_PARAMETERS',
  'DUPLICATE_EXECUTION',
  'UNCONFIRMED_HIGH_RISK_ACTION',
  'STATE_MISMATCH',
  'STATE_CHANGE_FAILED',
  'PARTIAL_STATE_CHANGE',
]);

/**
 * The primary failure reason is the first code of this list that the run has (ties: the earliest step).
 * Order: no answer at all; actions the user never authorised; wrong, duplicate or unconfirmed external
 * actions; actions that did not happen or did not land; fabricated or unsupported content; missing
 * structure; process violations; infrastructure; low soft scores; evaluator trouble. The idea: the
 * most consequential fault in the world comes first, since it is what the user pays for.
 */
export const FAILURE_PRECEDENCE: readonly FailureCode[] = [
  'MISSING_FINAL_ANSWER',
  'EMPTY_OR_INVALID_OUTPUT',
  'UNAUTHORIZED_PAYMENT',
  'UNAUTHORIZED_ACTION',
  'WRONG_EXECUTION_TARGET',
  'WRONG_EXECUTION_PARAMETERS',
  'DUPLICATE_EXECUTION',
  'UNCONFIRMED_HIGH_RISK_ACTION',
  'ACTION_NOT_EXECUTED',
  'EXECUTION_RESULT_NOT_FOUND',
  'STATE_CHANGE_FAILED',
  'PARTIAL_STATE_CHANGE',
  'STATE_MISMATCH',
  'FABRICATED_REFERENCE',
  'CITATION_NOT_FOUND',
  'CONTRADICTED_BY_EVIDENCE',
  'WRONG_FACT',
  'UNSUPPORTED_CLAIM',
  'CLAIM_EVIDENCE_MISMATCH',
  'MISSING_EVIDENCE',
  'MISSING_CITATION',
  'EVIDENCE_SOURCE_INACCESSIBLE',
  'MISSING_REQUIRED_OUTPUT',
  'MISSING_REQUIRED_FIELD',
  'OUTPUT_FORMAT_INVALID',
  'INCOMPLETE_ANSWER',
  'SYSTEM_PROMPT_VIOLATION',
  'SOP_NOT_FOLLOWED',
  'SKILL_INSTRUCTION_VIOLATION',
  'EXECUTION_TIMEOUT',
  'TOOL_TIMEOUT',
  'TOOL_FAILURE',
  'LOW_COMPLETENESS_SCORE',
  'LOW_EVIDENCE_VALIDITY_SCORE',
  'LOW_EVIDENCE_CONSISTENCY_SCORE',
  'LOW_METHODOLOGY_SCORE',
  'LOW_READABILITY_SCORE',
  'EVALUATOR_FAILURE',
  'LOW_CONFIDENCE_EVALUATION',
  'UNKNOWN_FAILURE',
];

/** The five trajectory failure classes of seed 001 (§6.5). */
export const TRAJECTORY_CLASSES = ['wrong_tool', 'bad_args', 'hallucinated_state', 'gave_up', 'loop'] as const;
export type TrajectoryClass = (typeof TRAJECTORY_CLASSES)[number];

/** Orders codes by FAILURE_PRECEDENCE (unknown codes last, in their given order). */
export function byPrecedence(codes: Iterable<string>): string[] {
  const rank = (c: string) => {
    const i = (FAILURE_PRECEDENCE as readonly string[]).indexOf(c);
    return i < 0 ? FAILURE_PRECEDENCE.length : i;
  };
  return [...new Set(codes)]
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map((x) => x.c);
}
