// Where a model call's input came from, as the ledger attributes it: its segments (declared by a
// context.compiled event, else read from the messages), the tool step each tool result came from,
// and the seed's trace_context_breakdown row. Counting and scaling are in provenance.ts.
import { bodyText } from '../recording/body.js';
import type {
  Body,
  HttpExchangePayload,
  ModelCalledPayload,
  Recording,
  StateType,
  ToolCalledPayload,
} from '../recording/types.js';
import {
  CONTEXT_SOURCES,
  type ContextSegment,
  type ContextSource,
  type ContextTokens,
  contextSegments,
} from './provenance.js';
import type { TraceContextBreakdownRow } from './types.js';

/** The context source a tool step's result counts as, by the step's state type (else tool_result). */
export const TOOL_SOURCE: Partial<Record<StateType, ContextSource>> = {
  RETRIEVE: 'retrieved_context',
  MEMORY_READ: 'memory',
  FILE_READ: 'artifact_context',
};

export function sumContext(a: ContextTokens, b: ContextTokens): ContextTokens {
  const out = { ...a };
  for (const k of CONTEXT_SOURCES) out[k] += b[k];
  return out;
}

export function contextRow(traceId: string, stepId: number, c: ContextTokens): TraceContextBreakdownRow {
  return {
    trace_id: traceId,
    step_id: stepId,
    system_prompt_tokens: c.system_prompt,
    skill_instruction_tokens: c.skill_instruction,
    user_instruction_tokens: c.user_instruction,
    history_tokens: c.history,
    memory_tokens: c.memory,
    tool_result_tokens: c.tool_result,
    retrieved_context_tokens: c.retrieved_context,
    artifact_context_tokens: c.artifact_context,
    other_context_tokens: c.other_context,
  };
}

/** Segments of a call: a context.compiled event's declared segments win over the message heuristics. */
export function callSegments(call: ModelCalledPayload, compiled: Record<string, unknown>[]): ContextSegment[] {
  for (const c of compiled) {
    if (!Array.isArray(c.segments)) continue;
    const declared: ContextSegment[] = [];
    for (const s of c.segments as unknown[]) {
      if (typeof s !== 'object' || s === null) continue;
      const seg = s as Record<string, unknown>;
      const source = normalizeSource(seg.source);
      if (!source) continue;
      const text = typeof seg.text === 'string' ? seg.text : '';
      const item: ContextSegment = { source, text };
      if (typeof seg.toolCallId === 'string') item.toolCallId = seg.toolCallId;
      declared.push(item);
    }
    if (declared.length > 0) return declared;
  }
  return contextSegments(call);
}

function normalizeSource(value: unknown): ContextSource | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.replace(/_tokens$/, '').replace(/_context$/, '');
  for (const s of CONTEXT_SOURCES) {
    if (s === value || s.replace(/_context$/, '') === name) return s;
  }
  return undefined;
}

/**
 * The source of a call's segments when every non-empty one has the same source and none is a tool
 * result (whose local count the tool events report), else undefined. Such a call's breakdown is
 * its whole input in that source, which is what scaling the local counts would give.
 */
export function singleSource(segments: readonly ContextSegment[]): ContextSource | undefined {
  let only: ContextSource | undefined;
  for (const seg of segments) {
    if (seg.text.length === 0) continue;
    if (seg.source === 'tool_result') return undefined;
    if (only === undefined) only = seg.source;
    else if (only !== seg.source) return undefined;
  }
  return only;
}

export function resolveToolStep(
  seg: ContextSegment,
  byCallId: Map<string, number>,
  byText: (text: string) => number | undefined,
): number | undefined {
  if (seg.toolCallId !== undefined) {
    const id = byCallId.get(seg.toolCallId);
    if (id !== undefined) return id;
  }
  return byText(seg.text);
}

export function argsText(args: unknown): string {
  if (args === undefined || args === null) return '';
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/** The raw result a tool returned: its HTTP response body, else its result body, else its result. */
export function toolResultText(
  recording: Recording,
  tool: ToolCalledPayload,
  exchanges: Map<string, HttpExchangePayload>,
): string {
  // The bytes an HTTP tool answered are its raw result; the recorder's `result` is a canonical form of them.
  const exchange = tool.exchangeId === undefined ? undefined : exchanges.get(tool.exchangeId);
  if (exchange?.response?.body) return readableText(recording, exchange.response.body);
  if (tool.resultBody) return readableText(recording, tool.resultBody);
  if (tool.result !== undefined) return typeof tool.result === 'string' ? tool.result : JSON.stringify(tool.result);
  if (tool.error) return tool.error.message;
  return '';
}

/** A body's text; a blob that cannot be read is no text. */
function readableText(recording: Recording, body: Body): string {
  try {
    return bodyText(recording, body);
  } catch {
    return '';
  }
}
