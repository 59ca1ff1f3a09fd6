// A tool rules file (`record --rules`): JSON or YAML, read and checked with ToolRuleSchema. Its own
// module so that YAML's parser loads only for a run given a rules file, not with every `record`.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { TapedeckError } from '../recording/errors.js';
import { type ToolRule, ToolRuleSchema } from './classify.js';

/** Loads user rules from a JSON or YAML file: a list of rules, or `{ rules: [...] }`. */
export function loadToolRules(file: string): ToolRule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new TapedeckError('RULES_UNREADABLE', `cannot read the tool rules file ${file}: ${String(cause)}`);
  }
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (cause) {
    throw new TapedeckError('RULES_INVALID', `${file} is not valid YAML or JSON: ${String(cause)}`);
  }
  const list = Array.isArray(value) ? value : (value as { rules?: unknown } | null)?.rules;
  const parsed = z.array(ToolRuleSchema).safeParse(list);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'RULES_INVALID',
      `${file}: rules${issue?.path.map((p) => `[${String(p)}]`).join('') ?? ''}: ${issue?.message ?? 'invalid'} (expected a list of { match: { method?, host?, path?, rpcMethod? }, stateType, name?, mutating? })`,
    );
  }
  return parsed.data;
}
