// Google Gemini (POST …/models/{model}:generateContent, and :streamGenerateContent — SSE with
// `alt=sse`, else a JSON array of the chunks), the Gemini API and Vertex AI alike. The model is
// in the path; `systemInstruction` is the system prompt, `contents` the turns (roles `user` and
// `model`), `functionCall` parts the tool calls and `functionResponse` parts their results.
//
// Gemini sends no call ids (the Live API aside): a call without one is named `<name>#<n>`, its
// occurrence among the conversation's calls of that name, and a response without one answers the
// earliest unanswered call of its name — the same ids in the decoded output and in later turns.
//
// Usage buckets: inputUncached = promptTokenCount + toolUsePromptTokenCount − cachedContentTokenCount;
// cacheRead = cachedContentTokenCount; cacheWrite = 0 (explicit caches are written by their own
// call); output = candidatesTokenCount (thoughts excluded); reasoning = thoughtsTokenCount. A stream
// reports running counts: the last chunk's are the call's. serverTools.google_search = the web
// search queries grounding ran (candidates[0].groundingMetadata.webSearchQueries), billed per query
// or per grounded prompt depending on the model: the price table says which.
import type { ToolCall, Usage } from '../recording/types.js';
import { eventJson } from './framing.js';
import { asArray, asText, CallIds, contentText, isJsonPost, isRecord, num, pathSegment, str } from './read.js';
import type { Json, ModelInput, ModelOutput, Provider, ToolSpec, Turn, TurnPart } from './types.js';

const ROUTE = /\/(?:models|tunedModels)\/([^/]+):(?:streamGenerateContent|generateContent)$/;

/** Knobs of `generationConfig` that change how an answer is sampled, not what is asked. */
const SAMPLING = [
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'seed',
  'candidateCount',
  'presencePenalty',
  'frequencyPenalty',
];

/** Gemini `usageMetadata` in buckets. */
export function geminiUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const prompt = num(usage.promptTokenCount) + num(usage.toolUsePromptTokenCount);
  const cached = Math.min(prompt, num(usage.cachedContentTokenCount));
  return {
    inputUncached: prompt - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: num(usage.candidatesTokenCount),
    reasoning: num(usage.thoughtsTokenCount),
  };
}

const partsOf = (content: unknown): unknown[] => (isRecord(content) ? asArray(content.parts) : []);

/** The system instruction's text: a string, or a Content's text parts. */
export function systemText(instruction: unknown): string | undefined {
  if (instruction === undefined || instruction === null) return undefined;
  if (typeof instruction === 'string') return instruction;
  return contentText(partsOf(instruction).filter((p) => !(isRecord(p) && p.thought === true)));
}

/** A function response as the model reads it: a lone text field as that text, else the JSON. */
function responseText(response: unknown): string {
  if (isRecord(response)) {
    const values = Object.values(response);
    if (values.length === 1 && typeof values[0] === 'string') return values[0];
  }
  return asText(response);
}

function partOf(part: unknown, ids: CallIds): TurnPart | undefined {
  if (!isRecord(part)) return undefined;
  if (typeof part.text === 'string') return part.text === '' ? undefined : { kind: 'text', text: part.text };
  if (isRecord(part.functionCall)) {
    const call = part.functionCall;
    return {
      kind: 'tool-call',
      id: ids.call(str(call.name) ?? '', str(call.id)),
      name: str(call.name) ?? '',
      arguments: JSON.stringify(call.args ?? {}),
    };
  }
  if (isRecord(part.functionResponse)) {
    const response = part.functionResponse;
    const callId = ids.answer(str(response.name), str(response.id));
    const name = str(response.name);
    return {
      kind: 'tool-result',
      ...(callId === undefined ? {} : { callId }),
      ...(name === undefined ? {} : { name }),
      text: responseText(response.response),
    };
  }
  if (isRecord(part.executableCode)) return { kind: 'text', text: str(part.executableCode.code) ?? '' };
  if (isRecord(part.codeExecutionResult)) return { kind: 'text', text: str(part.codeExecutionResult.output) ?? '' };
  return { kind: 'media', text: asText(part) };
}

/** Call ids after the request's conversation: a response's calls continue its numbering. */
function idsAfter(contents: unknown[]): CallIds {
  const ids = new CallIds();
  for (const content of contents) for (const part of partsOf(content)) partOf(part, ids);
  return ids;
}

/** The answer of a list of response chunks (one for a plain response). */
function assemble(chunks: Array<{ data: Json; offsetMs?: number }>, input: ModelInput): ModelOutput {
  const out: ModelOutput = { toolCalls: [] };
  const ids = idsAfter(input.messages);
  let text: string | undefined;
  let searches = 0;
  for (const { data, offsetMs } of chunks) {
    if (typeof data.modelVersion === 'string') out.model = data.modelVersion;
    const usage = geminiUsage(data.usageMetadata);
    if (usage) out.usage = usage;
    const candidate = asArray(data.candidates).find((c) => isRecord(c) && num(c.index) === 0);
    if (!isRecord(candidate)) continue;
    // Grounding with Google Search: the queries it ran (a stream repeats them; the longest list is the call's).
    if (isRecord(candidate.groundingMetadata))
      searches = Math.max(searches, asArray(candidate.groundingMetadata.webSearchQueries).length);
    for (const part of partsOf(candidate.content)) {
      if (!isRecord(part) || part.thought === true) continue;
      if (typeof part.text === 'string') {
        text = (text ?? '') + part.text;
        if (part.text !== '' && offsetMs !== undefined) out.firstTokenOffsetMs ??= offsetMs;
      } else if (isRecord(part.functionCall)) {
        const call = part.functionCall;
        const toolCall: ToolCall = {
          id: ids.call(str(call.name) ?? '', str(call.id)),
          name: str(call.name) ?? '',
          arguments: JSON.stringify(call.args ?? {}),
        };
        out.toolCalls.push(toolCall);
        if (offsetMs !== undefined) out.firstTokenOffsetMs ??= offsetMs;
      }
    }
    if (typeof candidate.finishReason === 'string') out.stopReason = candidate.finishReason;
  }
  if (text !== undefined) out.text = text;
  if (out.usage && searches > 0) out.usage = { ...out.usage, serverTools: { google_search: searches } };
  return out;
}

function toolsOf(tools: unknown[] | undefined): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools ?? []) {
    if (!isRecord(tool)) continue;
    for (const [kind, value] of Object.entries(tool)) {
      if (kind !== 'functionDeclarations') {
        out.push({ name: kind });
        continue;
      }
      for (const fn of asArray(value)) {
        if (!isRecord(fn) || typeof fn.name !== 'string') continue;
        const description = str(fn.description);
        const parameters = fn.parametersJsonSchema ?? fn.parameters;
        out.push({
          name: fn.name,
          ...(description === undefined ? {} : { description }),
          ...(parameters === undefined ? {} : { parameters }),
        });
      }
    }
  }
  return out;
}

export const gemini: Provider = {
  id: 'google.generateContent',
  provider: 'google',
  api: 'generateContent',
  kind: 'chat',
  detect: (request) => isJsonPost(request) && Array.isArray(request.json.contents) && ROUTE.test(request.url.pathname),
  readInput(body, request) {
    const system = systemText(body.systemInstruction);
    return {
      model: pathSegment(ROUTE.exec(request.url.pathname)?.[1] ?? ''),
      ...(system === undefined || system === '' ? {} : { system }),
      messages: asArray(body.contents),
      ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
    };
  },
  decodeBody(body, input) {
    // streamGenerateContent without alt=sse answers a JSON array of the chunks.
    const chunks = Array.isArray(body) ? body : [body];
    return assemble(
      chunks.filter(isRecord).map((data) => ({ data })),
      input,
    );
  },
  assembleStream(events, input) {
    const chunks: Array<{ data: Json; offsetMs: number }> = [];
    for (const event of events) {
      const data = eventJson(event);
      if (data !== undefined) chunks.push({ data, offsetMs: event.offsetMs });
    }
    return assemble(chunks, input);
  },
  turns(call) {
    const turns: Turn[] = [];
    if (call.system) turns.push({ role: 'system', parts: [{ kind: 'text', text: call.system }] });
    const ids = new CallIds();
    for (const content of call.messages) {
      if (!isRecord(content)) continue;
      const role =
        content.role === 'model'
          ? 'assistant'
          : content.role === 'user' || content.role === undefined
            ? 'user'
            : content.role === 'function' || content.role === 'tool'
              ? 'tool'
              : 'other';
      const parts = partsOf(content).flatMap((part) => partOf(part, ids) ?? []);
      turns.push({ role, parts });
    }
    return turns;
  },
  tools: (call) => toolsOf(call.tools),
  systemPrompt: (body) => systemText(body.systemInstruction),
  withSystemPrompt(body, prompt) {
    const instruction = body.systemInstruction;
    if (typeof instruction === 'string') return { ...body, systemInstruction: prompt };
    return { ...body, systemInstruction: { ...(isRecord(instruction) ? instruction : {}), parts: [{ text: prompt }] } };
  },
  volatile: ['labels'],
  structural(body) {
    const config = body.generationConfig;
    if (!isRecord(config)) return body;
    const kept: Json = {};
    for (const [k, v] of Object.entries(config)) if (!SAMPLING.includes(k)) kept[k] = v;
    const { generationConfig: _dropped, ...rest } = body;
    return Object.keys(kept).length > 0 ? { ...rest, generationConfig: kept } : rest;
  },
};
