// Eval contracts: the seed's YAML form (000 §3) plus expected world state, rules and budgets. Parsed with
// `yaml` keeping positions, validated with zod; a bad contract is a TapedeckError naming line and column.
import { existsSync, readFileSync } from 'node:fs';
import { isMap, isNode, LineCounter, parseDocument } from 'yaml';
import * as z from 'zod';
import { ExpectedStateSchema } from '../diff/index.js';
import { TapedeckError } from '../recording/errors.js';
import { leadingIssue } from '../recording/field-path.js';
import { nearestName } from '../recording/nearest-name.js';
import { CODE_LIKE, FAILURE_CODES } from './codes.js';

const Regex = z.string().refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a valid regular expression' },
);

/** How a named output or field shows in the final answer: a regex, or one of some literal strings. */
const FieldSpecSchema = z.union([
  Regex,
  z
    .object({
      pattern: Regex.optional(),
      any_of: z.array(z.string()).optional(),
      /** The value the field must have (WRONG_FACT when another value is given). */
      expected: z.union([z.string(), z.number()]).optional(),
    })
    .strict(),
]);

const Selector = { tool: z.string().optional(), method: z.string().optional(), url: z.string().optional() };

export const RuleSchema = z
  .object({
    id: z.string().min(1),
    description: z.string().optional(),
    /** Explicit rule kind; inferred from the other keys when omitted (see docs/scoring.md). */
    kind: z
      .enum(['read_before_write', 'max_calls', 'tool_order', 'requires_before', 'forbidden', 'confirmation', 'bounds'])
      .optional(),
    tool: z.string().optional(),
    tools: z.array(z.string()).optional(),
    /** read_before_write: argument names whose values must have been observed before the call. */
    args: z.array(z.string()).optional(),
    max_calls: z.number().int().nonnegative().optional(),
    /** tool_order: these tools must first be called in this order. */
    order: z.array(z.string()).optional(),
    /** requires_before: a call of `tool` needs an earlier call of one of these tools. */
    before: z.union([z.string(), z.array(z.string())]).optional(),
    forbidden: z.boolean().optional(),
    /** confirmation: a user message matching this regex (default: yes/confirm/approve/go ahead) before the call. */
    requires_confirmation: z.boolean().optional(),
    confirmation_pattern: Regex.optional(),
    /** The action is a payment (an unconfirmed one is UNAUTHORIZED_PAYMENT). */
    payment: z.boolean().optional(),
    failure_reason_code: z.string().optional(),
    severity: z.enum(['hard', 'soft']).optional(),
  })
  .catchall(z.union([z.number(), z.string(), z.boolean()]));

const ExecutionSchema = z
  .object({
    /** Which effects are the execution (tool name, HTTP method, URL substring). */
    action: z.object(Selector).strict().optional(),
    /** Who/what is acted on: `table` (where the record lands) and key -> value pairs. */
    target: z.record(z.string(), z.unknown()).optional(),
    /** Parameters: key -> value; `max_<key>` / `min_<key>` bound a numeric value. */
    parameters: z.record(z.string(), z.unknown()).optional(),
    /**
     * Which lists in `target` and `parameters` compare in order: `true` all, `false` none, or the
     * keys named; unsaid, by their key (src/diff/match.ts isOrdered), as a row expectation's.
     */
    ordered: z.union([z.boolean(), z.array(z.string())]).optional(),
    confirmation_id_pattern: Regex.optional(),
    max_executions: z.number().int().positive().optional(),
    high_risk: z.boolean().optional(),
    payment: z.boolean().optional(),
    confirmation_pattern: Regex.optional(),
  })
  .strict();

const ScoreWeightsSchema = z
  .object({
    completeness: z.number().nonnegative().optional(),
    evidence_validity: z.number().nonnegative().optional(),
    evidence_consistency: z.number().nonnegative().optional(),
    methodology: z.number().nonnegative().optional(),
    readability: z.number().nonnegative().optional(),
  })
  .strict();

const StateWeightsSchema = z
  .object({
    target_state_match: z.number().nonnegative().optional(),
    content_usability: z.number().nonnegative().optional(),
    format_quality: z.number().nonnegative().optional(),
    boundary_control: z.number().nonnegative().optional(),
  })
  .strict();

export const ContractSchema = z
  .object({
    task_id: z.string().min(1),
    task_name: z.string().optional(),
    version: z.union([z.string(), z.number()]).optional(),
    agent_id: z.string().optional(),
    skill_id: z.string().optional(),
    input: z.object({ user_instruction: z.string().optional() }).catchall(z.unknown()).optional(),
    success_criteria: z
      .object({
        required_outputs: z.array(z.string()).optional(),
        must_include: z.array(z.string()).optional(),
        must_not_include: z.array(z.string()).optional(),
        execution_result: z
          .object({
            required: z.boolean().optional(),
            must_include: z.array(z.string()).optional(),
            must_not_include: z.array(z.string()).optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
    fields: z.record(z.string(), FieldSpecSchema).optional(),
    execution: ExecutionSchema.optional(),
    expected_state: ExpectedStateSchema.optional(),
    rules: z.array(RuleSchema).optional(),
    budgets: z
      .object({
        max_steps: z.number().int().positive().optional(),
        max_total_tokens: z.number().int().positive().optional(),
        max_cost: z.number().positive().optional(),
      })
      .strict()
      .optional(),
    evidence: z
      .object({
        /** Regexes of citation tokens in the answer (URLs and [n]/[ref] markers are always recognised). */
        citation_patterns: z.array(Regex).optional(),
      })
      .strict()
      .optional(),
    claims: z
      .object({
        /** Regexes of key claims (ids, names) that must be grounded in observations. */
        patterns: z.array(Regex).optional(),
        /** Literal tokens never counted as claims. */
        ignore: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
    weights: ScoreWeightsSchema.optional(),
    state_weights: StateWeightsSchema.optional(),
    /** Sub-scores (0-10) below this raise the seed's LOW_*_SCORE codes. Default 6. */
    thresholds: ScoreWeightsSchema.optional(),
    /** Optional LLM judge rubric (used only when a judge endpoint is given). */
    judge: z.object({ rubric: z.string().optional(), model: z.string().optional() }).strict().optional(),
  })
  .strict()
  .superRefine((contract, ctx) => {
    // An entry written as a code that names none (a misspelling) would be looked for as text, and
    // never be found: the check it was meant to be would pass unseen.
    const codes = new Set([
      ...FAILURE_CODES,
      ...(contract.rules ?? []).flatMap((r) => r.failure_reason_code?.toUpperCase() ?? []),
    ]);
    const lists = [
      { path: ['success_criteria', 'must_not_include'], items: contract.success_criteria.must_not_include },
      {
        path: ['success_criteria', 'execution_result', 'must_not_include'],
        items: contract.success_criteria.execution_result?.must_not_include,
      },
    ];
    for (const { path, items } of lists)
      (items ?? []).forEach((item, i) => {
        if (!CODE_LIKE.test(item) || codes.has(item)) return;
        const near = nearestName(item, codes);
        ctx.addIssue({
          code: 'custom',
          path: [...path, i],
          message: `${item} is not a failure code${near ? ` (did you mean ${near}?)` : ''}: the codes are in docs/scoring.md, a rule's own in its failure_reason_code; to forbid the text itself, write it in lower case`,
        });
      });
  });

export type Contract = z.infer<typeof ContractSchema>;
export type Rule = z.infer<typeof RuleSchema>;
export type FieldSpec = z.infer<typeof FieldSpecSchema>;

/**
 * Loads an eval contract from a YAML file path or YAML text.
 * @throws TapedeckError('BAD_CONTRACT') naming `file:line:col` and the field.
 */
export function loadContract(fileOrYaml: string): Contract {
  const isText =
    fileOrYaml.includes('\n') || (!existsSync(fileOrYaml) && fileOrYaml.includes(':') && !/\.ya?ml$/i.test(fileOrYaml));
  if (!isText && !existsSync(fileOrYaml))
    throw new TapedeckError(
      'CONTRACT_NOT_FOUND',
      `contract ${fileOrYaml} not found: pass the path of an eval contract YAML file`,
    );
  let text = fileOrYaml;
  if (!isText) {
    try {
      text = readFileSync(fileOrYaml, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'EISDIR' ? 'is a directory, not a YAML file' : `cannot be read (${code ?? String(error)})`;
      throw new TapedeckError(
        'CONTRACT_NOT_FOUND',
        `contract ${fileOrYaml} ${why}: pass the path of an eval contract YAML file`,
      );
    }
  }
  return parseContract(text, isText ? '<contract>' : fileOrYaml);
}

/** Parses and validates contract YAML text; `source` names it in errors. */
export function parseContract(text: string, source = '<contract>'): Contract {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    const pos = lineCounter.linePos(syntax.pos[0]);
    throw new TapedeckError(
      'BAD_CONTRACT',
      `${source}:${pos.line}:${pos.col}: invalid YAML: ${syntax.message.split('\n')[0]}`,
    );
  }
  const parsed = ContractSchema.safeParse(doc.toJS());
  if (parsed.success) return parsed.data;
  const { issue, hint } = leadingIssue(parsed.error);
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  // The node at the issue's path, or its nearest ancestor that exists (a missing key points at its parent).
  let node: unknown;
  for (let n = path.length; n >= 0 && !isNode(node); n--)
    node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
  let offset = isNode(node) && node.range ? node.range[0] : 0;
  let field = path.length > 0 ? path.join('.') : '(top level)';
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    message = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')} (${hint ?? 'check the spelling against docs/scoring.md'})`;
    const pair = isMap(node)
      ? node.items.find((p) => isNode(p.key) && (p.key as { value?: unknown }).value === key)
      : undefined;
    if (pair && isNode(pair.key) && pair.key.range) offset = pair.key.range[0];
    field = [...path, key].join('.');
  } else if (path.length === 0 && issue.code === 'invalid_type') {
    message = `a contract is a YAML mapping with task_id and success_criteria (see docs/scoring.md); ${issue.message.replace(/^Invalid input: /, '')}`;
  } else if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    message = `required field is missing (${issue.message})`;
  }
  const pos = lineCounter.linePos(offset);
  throw new TapedeckError('BAD_CONTRACT', `${source}:${pos.line}:${pos.col}: ${field}: ${message}`);
}
