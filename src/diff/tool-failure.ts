// Whether a tool call failed, as its record says: the capture layer's error, the HTTP status of its
// request, or, for an MCP call whose transport answered fine (stdio; HTTP 200), a JSON-RPC error or a
// tool result marked `isError`. One home for every engine that asks whether an action landed.
import { parseSse } from '../providers/index.js';
import {
  type Body,
  bodyText,
  type HttpExchangePayload,
  isRecord,
  jsonOrText,
  type ToolCalledPayload,
} from '../recording/index.js';

type ReadBlob = (sha256: string) => Uint8Array;

/** A body's text; undefined when it is a blob that cannot be read here. */
function textOf(body: Body | undefined, readBlob: ReadBlob | undefined): string | undefined {
  if (body === undefined) return undefined;
  try {
    return bodyText({ readBlob: (sha) => Buffer.from(readBlob ? readBlob(sha) : []) }, body);
  } catch {
    return undefined;
  }
}

export interface ToolFailure {
  code: string;
  message: string;
}

/** The JSON-RPC answer (an object with `result` or `error`) in an MCP exchange's response: JSON or SSE. */
function jsonRpcAnswer(
  x: HttpExchangePayload,
  readBlob: ReadBlob | undefined,
): { result?: unknown; error?: unknown } | undefined {
  const res = x.response;
  if (res === undefined) return undefined;
  const texts = res.chunks
    ? parseSse(res.chunks.filter((c) => c.encoding === undefined)).map((e) => e.data)
    : [textOf(res.body, readBlob) ?? ''];
  for (const text of texts) {
    const value = jsonOrText(text);
    if (isRecord(value) && ('result' in value || 'error' in value)) return value;
  }
  return undefined;
}

/** The text an MCP tool result's content carries (what the agent was told went wrong). */
function contentText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content
    .map((c) => (isRecord(c) && typeof c.text === 'string' ? c.text : ''))
    .join(' ')
    .trim();
  return text === '' ? 'the tool reported an error' : text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * Why a tool call failed, or undefined when nothing says it did: its error (a tool() that threw, a
 * held-back or unanswered request, a JSON-RPC error over stdio), its request's error or HTTP status
 * (>= 400), a JSON-RPC error in an MCP exchange answered 200, or an MCP result with `isError: true`.
 * `result` is the result the agent observed when the caller has it decoded (a stored resultBody).
 *
 * @example toolCallFailure({ kind: 'mcp', result: { isError: true, content: [...] }, ... }) // { code: 'TOOL_ERROR', ... }
 */
export function toolCallFailure(
  p: ToolCalledPayload,
  x?: HttpExchangePayload,
  options: { result?: unknown; readBlob?: ReadBlob } = {},
): ToolFailure | undefined {
  if (p.error) return p.error;
  if (x?.error) return x.error;
  if (x?.response !== undefined && x.response.status >= 400)
    return { code: `HTTP_${x.response.status}`, message: x.response.statusText || 'request failed' };
  if (p.kind !== 'mcp') return undefined;
  const answer = x === undefined ? undefined : jsonRpcAnswer(x, options.readBlob);
  if (answer !== undefined && answer.error !== undefined && answer.error !== null) {
    const e = isRecord(answer.error) ? answer.error : {};
    return { code: String(e.code ?? 'ERROR'), message: String(e.message ?? 'JSON-RPC error') };
  }
  // A result kept as its text (keys in another order than sorted) is read as the JSON it is.
  const result = jsonOrText(options.result ?? p.result ?? textOf(p.resultBody, options.readBlob));
  if (isRecord(result) && result.isError === true) return { code: 'TOOL_ERROR', message: contentText(result) };
  return undefined;
}
