// Tool classification: which seed state type a non-LLM HTTP call is, its tool name, arguments
// and whether it mutates the world. Rules are tried in order (user rules first); the defaults:
// JSON-RPC `tools/call` -> MCP_CALL, GET on search/query/policy/knowledge-like paths -> RETRIEVE,
// the agent's telemetry -> OBSERVE, any other HTTP -> API_CALL; mutating = POST/PUT/PATCH/DELETE except MCP protocol chatter.
import * as z from 'zod';
import type { StdioRpc } from '../../sandbox/protocol.js';
import { canonicalJson } from '../recording/canonical-json.js';
import { isReadRpc } from '../recording/reads.js';
import { StateTypeSchema } from '../recording/schema-events.js';
import { isTelemetry } from '../recording/telemetry.js';
import type { Body, StateType, ToolCalledPayload } from '../recording/types.js';

/** A string matches exactly (case-insensitive); "/re/flags" is a regular expression. */
const Pattern = z.union([z.string(), z.instanceof(RegExp)]);

export const ToolRuleSchema = z
  .object({
    match: z
      .object({
        method: z.union([z.string(), z.array(z.string())]).optional(),
        host: Pattern.optional(),
        path: Pattern.optional(),
        /** JSON-RPC method of the request body (e.g. "tools/call"). */
        rpcMethod: Pattern.optional(),
      })
      .strict(),
    stateType: StateTypeSchema,
    /** Tool name; default "<METHOD> <path>" (MCP: the called tool's name). */
    name: z.string().optional(),
    mutating: z.boolean().optional(),
  })
  .strict();
export type ToolRule = z.infer<typeof ToolRuleSchema>;

export interface HttpCallInfo {
  method: string;
  url: URL;
  /** The request body parsed as JSON, if it was JSON. */
  json: unknown;
  /** The request headers, when known. */
  headers?: Record<string, string>;
}

export type ToolClassification = Pick<ToolCalledPayload, 'kind' | 'name' | 'stateType' | 'args' | 'mutating'>;

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRIEVE_PATH = /(search|query|queries|lookup|find|retriev|polic|knowledge|kb\b|docs?\b|faq|article|wiki|rag)/i;

function matches(pattern: string | RegExp | undefined, value: string): boolean {
  if (pattern === undefined) return true;
  if (pattern instanceof RegExp) return pattern.test(value);
  const re = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  if (re) return new RegExp(re[1] ?? '', re[2]).test(value);
  return pattern.toLowerCase() === value.toLowerCase();
}

function rpc(json: unknown): { method: string; params: Record<string, unknown> } | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  if (body.jsonrpc !== '2.0' || typeof body.method !== 'string') return undefined;
  const params =
    body.params !== null && typeof body.params === 'object' ? (body.params as Record<string, unknown>) : {};
  return { method: body.method, params };
}

function argsOf(call: HttpCallInfo): unknown {
  const query: Record<string, string> = {};
  for (const [key, value] of call.url.searchParams) query[key] = value;
  if (call.json !== undefined) return Object.keys(query).length > 0 ? { query, body: call.json } : call.json;
  return query;
}

/** Classifies a non-LLM HTTP call by the user's rules, then the defaults. */
export function classifyHttp(call: HttpCallInfo, rules: readonly ToolRule[] = []): ToolClassification {
  const method = call.method.toUpperCase();
  const message = rpc(call.json);
  const path = call.url.pathname;
  for (const rule of rules) {
    const m = rule.match;
    const methods = m.method === undefined ? undefined : [m.method].flat().map((x) => x.toUpperCase());
    if (methods !== undefined && !methods.includes(method)) continue;
    if (!matches(m.host, call.url.host) || !matches(m.path, path)) continue;
    if (m.rpcMethod !== undefined && (message === undefined || !matches(m.rpcMethod, message.method))) continue;
    const isMcp = message?.method === 'tools/call';
    return {
      kind: message === undefined ? 'http' : 'mcp',
      name:
        rule.name ?? (isMcp && typeof message?.params.name === 'string' ? message.params.name : `${method} ${path}`),
      stateType: rule.stateType,
      args: isMcp ? (message?.params.arguments ?? {}) : argsOf(call),
      mutating: rule.mutating ?? (MUTATING.has(method) && (message === undefined || isMcp)),
    };
  }
  if (message !== undefined) {
    const isCall = message.method === 'tools/call';
    const toolName = typeof message.params.name === 'string' ? message.params.name : message.method;
    return {
      kind: 'mcp',
      name: isCall ? toolName : `mcp ${message.method}`,
      stateType: isCall ? 'MCP_CALL' : 'OBSERVE',
      args: isCall ? (message.params.arguments ?? {}) : message.params,
      // A tools/call may change anything; another JSON-RPC method changes something unless it is a known read.
      mutating: MUTATING.has(method) && (isCall || !isReadRpc(message.method)),
    };
  }
  if (isTelemetry({ method, url: call.url, ...(call.headers ? { headers: call.headers } : {}) }))
    return { kind: 'http', name: `telemetry ${method} ${path}`, stateType: 'OBSERVE', args: {}, mutating: false };
  // MCP Streamable HTTP chatter without a JSON-RPC body, told by the session header: the
  // server-notification GET stream and the DELETE that ends the session. Not the agent's tools.
  const mcpSession = Object.keys(call.headers ?? {}).some((name) => name.toLowerCase() === 'mcp-session-id');
  if (mcpSession && (method === 'GET' || method === 'DELETE')) {
    const what = method === 'GET' ? 'notification stream' : 'session end';
    return { kind: 'mcp', name: `mcp ${what}`, stateType: 'OBSERVE', args: {}, mutating: false };
  }
  const stateType: StateType = method === 'GET' && RETRIEVE_PATH.test(path) ? 'RETRIEVE' : 'API_CALL';
  return { kind: 'http', name: `${method} ${path}`, stateType, args: argsOf(call), mutating: MUTATING.has(method) };
}

/** Guesses the state type of an in-process tool from its name. */
export function classifyToolName(name: string): StateType {
  if (/search|query|retriev|lookup|find|fetch|get|read|list|policy|knowledge/i.test(name)) return 'RETRIEVE';
  return 'API_CALL';
}

/**
 * A request over a child's stdio and its answer (MCP over stdio) as the tool call it is,
 * classified as MCP over HTTP's (`rules` by `rpcMethod` apply): a JSON-RPC error, or no answer
 * (the server ended first), is the call's error; a result longer than `maxInline` characters of
 * JSON goes to `store` (a body). Made alike by the recorder and the replayer.
 */
export function stdioRpcCall(
  rpc: StdioRpc,
  rules: readonly ToolRule[],
  store: (json: string) => Body,
  maxInline = 65536,
): ToolCalledPayload {
  const tool = classifyHttp(
    { method: 'POST', url: new URL('stdio://mcp/'), json: { jsonrpc: '2.0', ...rpc.request } },
    rules,
  );
  const { response } = rpc;
  const failure = response?.error;
  const error =
    response === undefined
      ? { code: 'NO_RESPONSE', message: 'the server ended before it answered' }
      : failure === undefined
        ? undefined
        : { code: String(failure.code ?? 'ERROR'), message: String(failure.message ?? 'JSON-RPC error') };
  const text = response?.result === undefined ? undefined : JSON.stringify(response.result);
  return {
    ...tool,
    ...(text === undefined ? {} : text.length > maxInline ? { resultBody: store(text) } : { result: response?.result }),
    ...(error === undefined ? {} : { error }),
    latencyMs: Math.max(0, rpc.end - rpc.ts),
  };
}

/** An in-process call of the agent's as the capture layer reports it: a tool() call, or a file read or write. */
export interface AgentCall {
  name: string;
  ts: number;
  end: number;
  args?: unknown;
  result?: unknown;
  error?: { code: string; message: string } | undefined;
  stateType?: StateType | undefined;
  mutating?: boolean | undefined;
}

/**
 * The tool call of an in-process call of the agent's (a tool() call, a file read or write under
 * the fs root). Made alike by the recorder and the replayer. The recording keeps JSON values with
 * sorted keys; a result whose keys came in another order is kept as its text (`store`), so a
 * replay hands the agent the object it had (JSON.stringify of it, sent to a model, is then the
 * same bytes).
 */
export function agentToolCall(call: AgentCall, store: (json: string) => Body): ToolCalledPayload {
  const text = call.result === undefined ? undefined : JSON.stringify(call.result);
  const ordered = text !== undefined && text !== canonicalJson(call.result);
  return {
    kind: 'in-process',
    name: call.name,
    stateType: call.stateType ?? classifyToolName(call.name),
    args: call.args ?? null,
    ...(ordered ? { resultBody: store(text) } : call.result === undefined ? {} : { result: call.result }),
    ...(call.error === undefined ? {} : { error: call.error }),
    mutating: call.mutating ?? false,
    latencyMs: Math.max(0, call.end - call.ts),
  };
}
