// The context-provenance bar's data: where a model call's input tokens came from, in the seed's
// trace_context_breakdown terms; from the ledger when it has the row, else estimated from text.
import type { ModelCalledPayload } from '../../src/recording/index.js';
import { messageTexts } from './steps.js';

export const PROVENANCE_SOURCES = [
  { key: 'system_prompt_tokens', label: 'system', letter: 'S', color: 'magenta' },
  { key: 'skill_instruction_tokens', label: 'skill', letter: 'K', color: 'blue' },
  { key: 'user_instruction_tokens', label: 'user', letter: 'U', color: 'green' },
  { key: 'history_tokens', label: 'history', letter: 'H', color: 'cyan' },
  { key: 'memory_tokens', label: 'memory', letter: 'M', color: 'white' },
  { key: 'tool_result_tokens', label: 'tool', letter: 'T', color: 'yellow' },
  { key: 'retrieved_context_tokens', label: 'retrieved', letter: 'R', color: 'red' },
  { key: 'artifact_context_tokens', label: 'artifact', letter: 'A', color: 'gray' },
  { key: 'other_context_tokens', label: 'other', letter: 'O', color: 'gray' },
] as const;

export type ProvenanceKey = (typeof PROVENANCE_SOURCES)[number]['key'];

export interface Provenance {
  tokens: Partial<Record<ProvenanceKey, number>>;
  /** True when estimated from message text (4 characters a token) rather than taken from the ledger. */
  approximate: boolean;
}

const CAMEL: Record<ProvenanceKey, string> = {
  system_prompt_tokens: 'systemPromptTokens',
  skill_instruction_tokens: 'skillInstructionTokens',
  user_instruction_tokens: 'userInstructionTokens',
  history_tokens: 'historyTokens',
  memory_tokens: 'memoryTokens',
  tool_result_tokens: 'toolResultTokens',
  retrieved_context_tokens: 'retrievedContextTokens',
  artifact_context_tokens: 'artifactContextTokens',
  other_context_tokens: 'otherContextTokens',
};

/** Reads a trace_context_breakdown row (snake_case as in the seed, or camelCase). */
export function provenanceFromRow(row: Record<string, unknown>): Provenance {
  const tokens: Provenance['tokens'] = {};
  for (const { key } of PROVENANCE_SOURCES) {
    const value = Number(row[key] ?? row[CAMEL[key]] ?? 0);
    if (value > 0) tokens[key] = value;
  }
  return { tokens, approximate: false };
}

/** Estimates the split from the messages' text, four characters a token. */
export function approximateProvenance(model: ModelCalledPayload): Provenance {
  const tokens: Provenance['tokens'] = {};
  const keyOf = {
    system: 'system_prompt_tokens',
    user: 'user_instruction_tokens',
    history: 'history_tokens',
    tool: 'tool_result_tokens',
    other: 'other_context_tokens',
  } as const;
  for (const m of messageTexts(model)) {
    const key = keyOf[m.source];
    tokens[key] = (tokens[key] ?? 0) + Math.ceil(m.text.length / 4);
  }
  return { tokens, approximate: true };
}

/** Splits `width` cells among the sources, proportionally, every present source getting at least one. */
export function barCells(p: Provenance, width: number): Array<{ key: ProvenanceKey; cells: number }> {
  const present = PROVENANCE_SOURCES.filter((s) => (p.tokens[s.key] ?? 0) > 0);
  const total = present.reduce((sum, s) => sum + (p.tokens[s.key] ?? 0), 0);
  if (total === 0 || width <= 0) return [];
  const cells = present.map((s) => ({
    key: s.key,
    cells: Math.max(1, Math.floor(((p.tokens[s.key] ?? 0) / total) * width)),
  }));
  let used = cells.reduce((sum, c) => sum + c.cells, 0);
  // Give the rounding remainder to the largest sources; take overflow from them too.
  const order = [...cells].sort((a, b) => (p.tokens[b.key] ?? 0) - (p.tokens[a.key] ?? 0));
  for (let i = 0; used < width; i = (i + 1) % order.length, used++) (order[i] as { cells: number }).cells++;
  for (let i = 0, guard = 0; used > width && guard < 10 * width + 100; i = (i + 1) % order.length, guard++) {
    const c = order[i] as { cells: number };
    if (c.cells > 1) {
      c.cells--;
      used--;
    }
  }
  return cells;
}
