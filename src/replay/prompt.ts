// Prompt overrides without touching agent code: the system prompt of an outgoing model request
// (wherever its provider keeps it: see src/providers) is replaced by a new prompt, or patched
// with a unified diff.
import { applyPatch } from 'diff';
import { withSystemPrompt } from '../providers/index.js';
import { TapedeckError } from '../recording/index.js';
import type { RequestApi } from './normalize.js';

export type PromptOverride =
  | { kind: 'replace'; text: string }
  /** `result`: the recorded prompt patched, which an agent reading SYSTEM_PROMPT already sends (not patched twice). */
  | { kind: 'patch'; patch: string; result?: string };

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

/**
 * Applies an override to a model request body; returns the new body text (unchanged when not JSON,
 * and when the request has no system prompt: see withSystemPrompt in src/providers).
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
  const next = withSystemPrompt(api, json, (current) => applyOverride(current, override));
  // A call with no system prompt goes out byte for byte as the agent made it.
  return next === json ? bodyText : JSON.stringify(next);
}
