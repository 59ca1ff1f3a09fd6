// Prompt overrides without touching agent code: the system/developer message (Chat
// Completions), `instructions` (Responses) or `system` (Anthropic Messages) of an outgoing
// model request is replaced by a new prompt, or patched with a unified diff.
import { applyPatch } from 'diff';
import { TapedeckError } from '../recording/index.js';
import type { RequestApi } from './normalize.js';

export type PromptOverride =
  | { kind: 'replace'; text: string }
  /** `result`: the recorded prompt patched, which an agent reading SYSTEM_PROMPT already sends (not patched twice). */
  | { kind: 'patch'; patch: string; result?: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
  }
  return '';
}

const isSystemMessage = (m: unknown): m is Json => isObject(m) && (m.role === 'system' || m.role === 'developer');

/** The system prompt of a model request body (joined when there are several), if any. */
export function systemPromptOf(api: RequestApi, body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  if (api === 'anthropic.messages') return body.system === undefined ? undefined : textOf(body.system);
  if (api === 'openai.responses' && typeof body.instructions === 'string') return body.instructions;
  const list = api === 'openai.responses' ? body.input : body.messages;
  if (!Array.isArray(list)) return undefined;
  const system = list.filter(isSystemMessage);
  return system.length > 0 ? system.map((m) => textOf(m.content)).join('\n\n') : undefined;
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

/** Returns a copy of the body with its system prompt set to `prompt`. */
export function withSystemPrompt(api: RequestApi, body: Json, prompt: string): Json {
  const out: Json = { ...body };
  if (api === 'anthropic.messages') {
    if (Array.isArray(body.system)) {
      const last = body.system[body.system.length - 1];
      const cache = isObject(last) && last.cache_control !== undefined ? { cache_control: last.cache_control } : {};
      out.system = [{ type: 'text', text: prompt, ...cache }];
    } else out.system = prompt;
    return out;
  }
  if (api === 'openai.responses' && (typeof body.instructions === 'string' || !Array.isArray(body.input))) {
    out.instructions = prompt;
    return out;
  }
  const key = api === 'openai.responses' ? 'input' : 'messages';
  const list = Array.isArray(body[key]) ? (body[key] as unknown[]) : [];
  const first = list.findIndex(isSystemMessage);
  if (first < 0) {
    out[key] = [{ role: 'system', content: prompt }, ...list];
    return out;
  }
  const role = (list[first] as Json).role;
  out[key] = list.flatMap((m, i) =>
    i === first ? [{ ...(m as Json), role, content: prompt }] : isSystemMessage(m) ? [] : [m],
  );
  return out;
}

/** Applies an override to a model request body; returns the new body text (unchanged when not JSON). */
export function overrideRequestBody(api: RequestApi, bodyText: string, override: PromptOverride): string {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return bodyText;
  }
  if (!isObject(body)) return bodyText;
  const next = applyOverride(systemPromptOf(api, body), override);
  return JSON.stringify(withSystemPrompt(api, body, next));
}
