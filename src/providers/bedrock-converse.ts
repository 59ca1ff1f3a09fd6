// AWS Bedrock's Converse API (POST …/model/{modelId}/converse, and …/converse-stream: an AWS
// event stream, `framing: 'aws-eventstream'`), every Bedrock model behind one shape: the model id
// in the path (URL-encoded: `anthropic.claude-…-v1%3A0`, an inference profile `us.anthropic.…`, or
// an ARN), `system` a list of blocks (`text`, `cachePoint`, `guardContent`), `messages` with
// content blocks (`text`, `image`, `document`, `toolUse`, `toolResult`, `reasoningContent`), tools
// in `toolConfig.tools[].toolSpec` (schema in `inputSchema.json`). Tool calls carry ids
// (`toolUseId`). A stream's events: messageStart, contentBlockStart (a toolUse's id and name),
// contentBlockDelta (text, or a toolUse's input as JSON text in pieces), contentBlockStop,
// messageStop (the stop reason), metadata (usage).
//
// Usage buckets: inputUncached = inputTokens (Bedrock reports cache reads and writes apart from
// it); cacheRead = cacheReadInputTokens; cacheWrite = cacheWriteInputTokens; output = outputTokens
// (reasoning is not counted apart by any model on Bedrock); reasoning = 0; cacheWrite1h = the
// `cacheDetails` entries with ttl `1h` (the part of the writes kept 1 hour, at its own price).
import type { ToolCall, Usage } from '../recording/types.js';
import { eventJson } from './framing.js';
import {
  asArray,
  asText,
  contentText,
  isJsonPost,
  isRecord,
  layOver,
  num,
  pathOf,
  pathSegment,
  str,
  toolResultPart,
  withoutKeys,
} from './read.js';
import type { Json, ModelOutput, Provider, ToolSpec, Turn, TurnPart } from './types.js';

const ROUTE = /\/model\/([^/]+)\/(?:converse|converse-stream)$/;

/** Bedrock usage in buckets. */
export function bedrockUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const out: Usage = {
    inputUncached: num(usage.inputTokens),
    cacheRead: num(usage.cacheReadInputTokens),
    cacheWrite: num(usage.cacheWriteInputTokens),
    output: num(usage.outputTokens),
    reasoning: 0,
  };
  // cacheDetails: [{ ttl: '1h' | '5m', inputTokens }], the writes split by lifetime.
  let oneHour = 0;
  for (const detail of asArray(usage.cacheDetails))
    if (isRecord(detail) && detail.ttl === '1h') oneHour += num(detail.inputTokens);
  if (oneHour > 0) out.cacheWrite1h = Math.min(oneHour, out.cacheWrite);
  return out;
}

/** The system blocks' text, joined; undefined without any. */
function systemText(system: unknown): string | undefined {
  if (!Array.isArray(system)) return undefined;
  const text = contentText(system);
  return text === '' ? undefined : text;
}

function blockParts(content: unknown): TurnPart[] {
  const parts: TurnPart[] = [];
  for (const block of asArray(content)) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') {
      if (block.text !== '') parts.push({ kind: 'text', text: block.text });
    } else if (isRecord(block.toolUse)) {
      const use = block.toolUse;
      parts.push({
        kind: 'tool-call',
        id: str(use.toolUseId) ?? '',
        name: str(use.name) ?? '',
        arguments: JSON.stringify(use.input ?? {}),
      });
    } else if (isRecord(block.toolResult)) {
      const result = block.toolResult;
      const text = asArray(result.content)
        .map((c) => (isRecord(c) && typeof c.text === 'string' ? c.text : isRecord(c) ? asText(c.json ?? c) : ''))
        .join('\n');
      parts.push(toolResultPart(text, str(result.toolUseId), undefined));
    } else if (block.cachePoint === undefined && block.reasoningContent === undefined)
      parts.push({ kind: 'media', text: asText(block) });
  }
  return parts;
}

/** The answer of a Converse body. */
function decodeBody(body: unknown): ModelOutput {
  const out: ModelOutput = { toolCalls: [] };
  if (!isRecord(body)) return out;
  const message = isRecord(body.output) && isRecord(body.output.message) ? body.output.message : {};
  const parts = blockParts(message.content);
  const texts = parts.flatMap((p) => (p.kind === 'text' ? [p.text] : []));
  if (texts.length > 0) out.text = texts.join('');
  for (const p of parts)
    if (p.kind === 'tool-call') out.toolCalls.push({ id: p.id, name: p.name, arguments: p.arguments });
  const usage = bedrockUsage(body.usage);
  if (usage) out.usage = usage;
  const stop = str(body.stopReason);
  if (stop !== undefined) out.stopReason = stop;
  return out;
}

/** A list of system blocks with its text set to `prompt`, the blocks it keeps whole (and cache points) left as they were. */
function withSystemBlocks(blocks: unknown[], prompt: string): unknown[] {
  const read = blocks.flatMap((b, i) => (isRecord(b) && typeof b.text === 'string' && b.text !== '' ? [i] : []));
  const { head, tail, middle } = layOver(
    read.map((i) => (blocks[i] as Json).text as string),
    '\n',
    prompt,
  );
  if (head === read.length && middle === '') return blocks;
  const swapped = read.slice(head, read.length - tail);
  const first = swapped[0];
  if (first === undefined) {
    const at = head === 0 ? (read[0] ?? 0) : (read[head - 1] as number) + 1;
    return [...blocks.slice(0, at), { text: middle }, ...blocks.slice(at)];
  }
  return blocks.flatMap((b, i) =>
    i === first ? (middle === '' ? [] : [{ text: middle }]) : swapped.includes(i) ? [] : [b],
  );
}

export const bedrockConverse: Provider = {
  id: 'bedrock.converse',
  provider: 'bedrock',
  api: 'converse',
  kind: 'chat',
  framing: 'aws-eventstream',
  detect: (request) => isJsonPost(request) && ROUTE.test(pathOf(request)) && Array.isArray(request.json.messages),
  readInput(body, request) {
    const system = systemText(body.system);
    const tools = isRecord(body.toolConfig) ? body.toolConfig.tools : undefined;
    return {
      model: pathSegment(ROUTE.exec(pathOf(request))?.[1] ?? ''),
      ...(system === undefined ? {} : { system }),
      messages: asArray(body.messages),
      ...(Array.isArray(tools) ? { tools } : {}),
    };
  },
  decodeBody: (body) => decodeBody(body),
  assembleStream(events) {
    const out: ModelOutput = { toolCalls: [] };
    let text: string | undefined;
    const calls = new Map<number, ToolCall>();
    for (const event of events) {
      const data = eventJson(event);
      if (data === undefined) continue;
      const index = num(data.contentBlockIndex);
      if (event.event === 'contentBlockStart' && isRecord(data.start) && isRecord(data.start.toolUse)) {
        const use = data.start.toolUse;
        calls.set(index, { id: str(use.toolUseId) ?? '', name: str(use.name) ?? '', arguments: '' });
        out.firstTokenOffsetMs ??= event.offsetMs;
      } else if (event.event === 'contentBlockDelta' && isRecord(data.delta)) {
        const delta = data.delta;
        if (typeof delta.text === 'string') {
          text = (text ?? '') + delta.text;
          if (delta.text !== '') out.firstTokenOffsetMs ??= event.offsetMs;
        } else if (isRecord(delta.toolUse)) {
          const call = calls.get(index);
          if (call) call.arguments += str(delta.toolUse.input) ?? '';
        }
      } else if (event.event === 'messageStop') {
        const stop = str(data.stopReason);
        if (stop !== undefined) out.stopReason = stop;
      } else if (event.event === 'metadata') {
        const usage = bedrockUsage(data.usage);
        if (usage) out.usage = usage;
      }
    }
    if (text !== undefined) out.text = text;
    out.toolCalls = [...calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, call]) => ({ ...call, arguments: call.arguments === '' ? '{}' : call.arguments }));
    return out;
  },
  turns(call) {
    const turns: Turn[] = [];
    if (call.system) turns.push({ role: 'system', parts: [{ kind: 'text', text: call.system }] });
    for (const message of call.messages) {
      if (!isRecord(message)) continue;
      const parts = blockParts(message.content);
      const results = parts.length > 0 && parts.every((p) => p.kind === 'tool-result');
      const role = results
        ? 'tool'
        : message.role === 'assistant'
          ? 'assistant'
          : message.role === 'user'
            ? 'user'
            : 'other';
      turns.push({ role, parts });
    }
    return turns;
  },
  tools(call): ToolSpec[] {
    return asArray(call.tools).flatMap((tool) => {
      const spec = isRecord(tool) && isRecord(tool.toolSpec) ? tool.toolSpec : undefined;
      const name = spec ? str(spec.name) : undefined;
      if (spec === undefined || name === undefined) return [];
      const description = str(spec.description);
      const parameters = isRecord(spec.inputSchema) ? spec.inputSchema.json : undefined;
      return [
        {
          name,
          ...(description === undefined ? {} : { description }),
          ...(parameters === undefined ? {} : { parameters }),
        },
      ];
    });
  },
  systemPrompt: (body) => systemText(body.system),
  withSystemPrompt: (body, prompt) => ({ ...body, system: withSystemBlocks(asArray(body.system), prompt) }),
  volatile: ['requestMetadata'],
  structural(body) {
    const config = body.inferenceConfig;
    const rest = withoutKeys(body, ['inferenceConfig', 'requestMetadata']);
    if (!isRecord(config)) return rest;
    const kept = withoutKeys(config, ['temperature', 'topP', 'maxTokens']);
    return Object.keys(kept).length > 0 ? { ...rest, inferenceConfig: kept } : rest;
  },
};
