// Prompt overrides without touching agent code: the system prompt of an outgoing model request
// (wherever its provider keeps it: see src/providers) is replaced by a new prompt, or patched
// with a unified diff. An override changes ONE agent's prompt: in a run of several agents (a
// front desk handing off to a specialist, an agent used as another's tool) each has its own
// prompt, and the others' calls go out as they were made. A replay's options become the override
// here too (promptOverride), with what is said of it before the agent runs (overrideWarnings).
import { applyPatch } from 'diff';
import { promptSimilarity, SAME_AGENT, systemPromptOf, withSystemPrompt } from '../providers/index.js';
import { TapedeckError } from '../recording/index.js';
import { parseJson, type RequestApi } from './normalize.js';
import type { RecordedCall } from './recorded-calls.js';
import type { ReplayOptions } from './types.js';

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

/**
 * The prompt override, and the prompt an agent that reads its own prompt gets (the new one, or the
 * recorded one patched). The override changes one agent's prompt (see PromptTarget): the one whose
 * recorded prompt contains `promptFor`, else, for a patch, the first the patch applies to, else the
 * run's own (the first model call that has one: a call inside a tool may come first, with none).
 */
export function promptOverride(
  options: ReplayOptions,
  calls: readonly RecordedCall[],
): { override?: PromptOverride; promptForEnv?: string; recorded?: string } {
  const override: PromptOverride | undefined =
    options.systemPrompt !== undefined
      ? { kind: 'replace', text: options.systemPrompt }
      : options.promptPatch !== undefined
        ? { kind: 'patch', patch: options.promptPatch }
        : undefined;
  if (!override) return {};
  const prompts = calls.map(systemPromptOfCall).filter((system) => system !== undefined);
  const recorded = targetPrompt(override, prompts, options.promptFor);
  if (recorded === undefined && override.kind === 'patch') {
    throw new TapedeckError(
      'PROMPT_PATCH_FAILED',
      'No recorded model call has a system prompt, so there is nothing to patch; give the new prompt with --system-prompt, or replay another recording.',
    );
  }
  const promptForEnv = applyOverride(recorded, override, 'the recorded system prompt');
  if (override.kind === 'patch') override.result = promptForEnv;
  if (recorded !== undefined) override.target = promptTarget(recorded, prompts);
  return { override, promptForEnv, ...(recorded !== undefined ? { recorded } : {}) };
}

/** The recorded prompt an override changes (see promptOverride). */
function targetPrompt(override: PromptOverride, prompts: readonly string[], promptFor?: string): string | undefined {
  if (promptFor !== undefined) {
    const found = prompts.find((p) => p.includes(promptFor));
    if (found !== undefined) return found;
    const agents = [...new Set(prompts)].map((p) => JSON.stringify(p.split('\n')[0]?.slice(0, 60)));
    throw new TapedeckError(
      'PROMPT_TARGET_NOT_FOUND',
      `No recorded system prompt contains ${JSON.stringify(promptFor)}; the recorded prompts begin ${agents.join(', ') || '(none: no model call has one)'}.`,
    );
  }
  if (override.kind === 'patch') {
    const fits = prompts.find((p) => patchFits(p, override.patch));
    if (fits !== undefined) return fits;
  }
  return prompts[0];
}

/** The system prompt of a recorded model call, if it had one. */
function systemPromptOfCall(call: RecordedCall): string | undefined {
  if (call.kind !== 'model') return undefined;
  if (call.model?.system !== undefined) return call.model.system;
  const body = parseJson(call.request.bodyText);
  return systemPromptOf(call.view.api, body.ok ? body.value : {});
}

/** What is said of an override before the agent runs: one that changes nothing a model request carries. */
export function overrideWarnings(override: PromptOverride | undefined, recordedPrompt: string | undefined): string[] {
  const warnings: string[] = [];
  if (
    override?.kind === 'replace' &&
    recordedPrompt !== undefined &&
    override.text !== recordedPrompt &&
    override.text.trim() === recordedPrompt.trim()
  ) {
    warnings.push(
      "the new system prompt is the recorded one but for whitespace at its ends (a file's trailing newline?): model requests carry it as given, so none matches a recorded one and every model call goes live",
    );
  }
  if (override?.kind === 'replace' && recordedPrompt === undefined) {
    warnings.push(
      'no recorded model call has a system prompt: the new one is given to the agent (SYSTEM_PROMPT) but added to no model request (a prompt override replaces a prompt, it never adds one)',
    );
  }
  return warnings;
}
