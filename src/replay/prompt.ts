// Prompt overrides without touching agent code: the system prompt of an outgoing model request
// (wherever its provider keeps it: see src/providers) is replaced by a new prompt, or patched
// with a unified diff. An override changes ONE agent's prompt: in a run of several agents (a
// front desk handing off to a specialist, an agent used as another's tool) each has its own
// prompt, and the others' calls go out as they were made.
import { applyPatch } from 'diff';
import { promptSimilarity, SAME_AGENT, systemPromptOf, withSystemPrompt } from '../providers/index.js';
import { TapedeckError } from '../recording/index.js';
import type { RequestApi } from './normalize.js';

export type PromptOverride = (
  | { kind: 'replace'; text: string }
  /** `result`: the recorded prompt patched, which an agent reading SYSTEM_PROMPT already sends (not patched twice). */
  | { kind: 'patch'; patch: string; result?: string }
) & { target?: PromptTarget };

/**
 * Whose prompt an override changes: the agent whose recorded prompt is `prompt`, told apart from
 * the other agents of the run by `others` (their recorded prompts). With no others, every prompt
 * is that agent's, however it varies from call to call (a date or a counter in it).
 */
export interface PromptTarget {
  prompt: string;
  others: string[];
}

/**
 * The target of an override among the run's recorded prompts (in call order): the agent whose
 * prompt is `prompt`, and the other agents' prompts (those not alike to it).
 */
export function promptTarget(prompt: string, recorded: readonly string[]): PromptTarget {
  const others = [...new Set(recorded)].filter((p) => promptSimilarity(p, prompt) < SAME_AGENT);
  return { prompt, others };
}

/**
 * Whether a request's system prompt is the target agent's: the recorded one, the one the override
 * makes (an agent that reads its prompt from SYSTEM_PROMPT already sends it), or, when the run has
 * other agents, one closer to the target's than to any other agent's.
 */
export function isTargetPrompt(current: string, override: PromptOverride): boolean {
  const target = override.target;
  if (target === undefined || target.others.length === 0 || current === target.prompt) return true;
  if (current === (override.kind === 'replace' ? override.text : override.result)) return true;
  if (target.others.includes(current)) return false;
  const own = promptSimilarity(current, target.prompt);
  return target.others.every((other) => promptSimilarity(current, other) < own);
}

/** The prompt text an override produces from the current one. */
export function applyOverride(
  current: string | undefined,
  override: PromptOverride,
  where = 'the system prompt',
): string {
  if (override.kind === 'replace') return override.text;
  if (override.result !== undefined && current === override.result) return current;
  const patched = applyPatch(current ?? '', override.patch);
  if (patched === false) {
    throw new TapedeckError(
      'PROMPT_PATCH_FAILED',
      `The prompt patch does not apply to ${where}; make the patch against the recorded prompt (tapedeck show the recording's first model call).`,
    );
  }
  return patched;
}

/** Whether a unified diff applies to a prompt. */
export function patchFits(prompt: string, patch: string): boolean {
  return applyPatch(prompt, patch) !== false;
}

/**
 * Applies an override to a model request body; returns the new body text (unchanged when not JSON,
 * when the request has no system prompt — see withSystemPrompt in src/providers — and when its
 * prompt is another agent's: isTargetPrompt).
 */
export function overrideRequestBody(api: RequestApi, bodyText: string, override: PromptOverride): string {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return bodyText;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return bodyText;
  const json = body as Record<string, unknown>;
  const current = systemPromptOf(api, json);
  if (current === undefined || !isTargetPrompt(current, override)) return bodyText;
  const next = withSystemPrompt(api, json, (prompt) => applyOverride(prompt, override));
  // A call with no system prompt goes out byte for byte as the agent made it.
  return next === json ? bodyText : JSON.stringify(next);
}
