// Request normalisation for matching: canonical JSON, the declared volatile fields of each
// API (model APIs declare theirs in src/providers), the three match keys (exact, normalised,
// structural) and field diffs between requests.

import { isUtf8 } from 'node:buffer';
import { detectProvider, providerById } from '../providers/index.js';
import { isBinaryType } from '../recording/body.js';
import { canonicalJson } from '../recording/canonical-json.js';
import { parseJson } from '../recording/json.js';
import { masksForMatching, type Redactor } from '../recording/redact.js';

// The shared JSON helpers (src/recording/json.ts), under the names the replay modules import them by.
export { canonicalJson as canonical, parseJson };

/** A request as the replayer sees it (already redacted with the recording's redactor). */
export interface LiveRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The body as utf8 text (JSON or other), when there is one. */
  bodyText?: string;
}

/**
 * A live request with its secrets redacted as the recorder stores requests (what matching
 * compares): headers first (a secret they name is then known in the URL and body too, as in
 * src/recording/redact-events.ts), a text body as text; a body kept as bytes (a binary content
 * type, or not UTF-8) through the bytes pass, its text read from the masked bytes as a recorded
 * body kept as bytes is (recorded-calls.ts), its masks as masksForMatching reads them.
 */
export function redactLive(redactor: Redactor, req: LiveRequest, bytes?: Uint8Array): LiveRequest {
  const headers = redactor.headers(req.headers);
  const contentType = contentTypeOf(req.headers);
  const asBytes =
    bytes !== undefined && bytes.byteLength > 0 && (req.bodyText === undefined || isBinaryType(contentType));
  const bodyText = asBytes
    ? bytesForMatching(redactor.bytes(bytes))
    : req.bodyText === undefined
      ? undefined
      : redactor.text(req.bodyText);
  return {
    method: req.method,
    url: redactor.url(req.url),
    headers,
    ...(bodyText !== undefined ? { bodyText } : {}),
  };
}

/**
 * A body kept as bytes (masked) as matching reads it, recorded and live alike: its UTF-8 text when
 * it is UTF-8, else one character per byte (latin1), so bodies that differ only in bytes a UTF-8
 * reading would turn into the same replacement character stay two requests; masks read as
 * masksForMatching reads them (they are ASCII in either reading).
 */
export function bytesForMatching(bytes: Uint8Array): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return masksForMatching(buffer.toString(isUtf8(buffer) ? 'utf8' : 'latin1'));
}

export interface FieldDiff {
  path: string;
  expected: unknown;
  actual: unknown;
}

/**
 * The API a request speaks, decided from its path, body and headers: a model provider's id
 * (`openai.chat.completions`, `anthropic.messages`, … — see src/providers), `jsonrpc` or `http`.
 */
export type RequestApi = string;

/** Names dropped wherever they occur in a JSON body or query string: per-request ids. */
const VOLATILE_ANY_DEPTH =
  /^(request_?id|idempotency_?key|client_?request_?id|nonce|trace_?id|span_?id|x-request-id)$/i;

/** Declared volatile top-level fields of an API, dropped by the normalised layer (a provider declares its own). */
function volatileTopLevel(api: RequestApi): readonly string[] {
  return providerById(api)?.volatile ?? (api === 'jsonrpc' ? ['id'] : []);
}

function pathOf(url: string): { origin: string; path: string; query: Record<string, string[]> } {
  try {
    const u = new URL(url);
    const query: Record<string, string[]> = {};
    for (const [k, v] of u.searchParams) (query[k] ??= []).push(v);
    return { origin: u.origin, path: u.pathname, query };
  } catch {
    return { origin: '', path: url, query: {} };
  }
}

/** Which API a request speaks. */
export function apiOf(method: string, url: string, body: unknown, headers: Record<string, string> = {}): RequestApi {
  const provider = modelProviderOf(method, url, body, headers);
  if (provider) return provider.id;
  if (body !== null && typeof body === 'object' && (body as Record<string, unknown>).jsonrpc === '2.0')
    return 'jsonrpc';
  return 'http';
}

function modelProviderOf(method: string, url: string, body: unknown, headers: Record<string, string>) {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  return detectProvider({ method: method.toUpperCase(), url: parsed, headers, json: body });
}

export function isModelApi(api: RequestApi): boolean {
  return providerById(api) !== undefined;
}

function dropVolatile(value: unknown, topLevel: readonly string[], depth: number): unknown {
  if (Array.isArray(value)) return value.map((v) => dropVolatile(v, topLevel, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (depth === 0 && topLevel.includes(k)) continue;
      if (VOLATILE_ANY_DEPTH.test(k)) continue;
      out[k] = dropVolatile(v, topLevel, depth + 1);
    }
    return out;
  }
  return value;
}

/** The normalised view of a request: what the normalised layer compares, and what field diffs walk. */
export interface RequestView {
  api: RequestApi;
  method: string;
  path: string;
  query: Record<string, string[]>;
  body: unknown;
}

/** The boundary every multipart body is read with: the client draws a new one for each request. */
const MATCH_BOUNDARY = 'tapedeck-boundary';

function contentTypeOf(headers: Record<string, string>): string | undefined {
  return Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
}

/**
 * A request as matching reads it: a multipart/* body (text, or bytes read as text) with its
 * boundary, drawn at random per request (fetch's FormData, the `form-data` package), replaced by
 * one fixed token in the body and in the content type, recorded and live alike; every other byte
 * stays, so uploads of other fields or file bytes still differ. Any other request as it is.
 */
function forMatching(req: LiveRequest): LiveRequest {
  const contentType = contentTypeOf(req.headers);
  if (req.bodyText === undefined || contentType === undefined || !/^\s*multipart\//i.test(contentType)) return req;
  const param = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = param?.[1] ?? param?.[2];
  if (param === null || boundary === undefined || boundary === MATCH_BOUNDARY) return req;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    headers[name] =
      name.toLowerCase() === 'content-type' ? value.replace(param[0], `; boundary=${MATCH_BOUNDARY}`) : value;
  return { ...req, headers, bodyText: req.bodyText.split(`--${boundary}`).join(`--${MATCH_BOUNDARY}`) };
}

export function viewOf(live: LiveRequest): RequestView {
  const req = forMatching(live);
  const method = req.method.toUpperCase();
  const parsed = parseJson(req.bodyText);
  const body = parsed.ok ? parsed.value : (req.bodyText ?? null);
  const api = apiOf(method, req.url, body, req.headers);
  const { path, query } = pathOf(req.url);
  const q: Record<string, string[]> = {};
  for (const k of Object.keys(query).sort()) if (!VOLATILE_ANY_DEPTH.test(k)) q[k] = query[k] ?? [];
  return { api, method, path, query: q, body: parsed.ok ? dropVolatile(body, volatileTopLevel(api), 0) : body };
}

/** A short description of a request for divergence payloads: the body only when it is not a model call. */
export function summaryOf(view: RequestView): Record<string, unknown> {
  return {
    api: view.api,
    method: view.method,
    path: view.path,
    ...(Object.keys(view.query).length > 0 ? { query: view.query } : {}),
    ...(isModelApi(view.api) || view.body === null ? {} : { body: view.body }),
  };
}

/** The structural identity: the tool (or model API) and its canonical arguments, host ignored. */
export function structuralOf(view: RequestView): unknown {
  const body = view.body;
  const provider = providerById(view.api);
  if (provider && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    return { api: view.api, body: provider.structural(body as Record<string, unknown>) };
  }
  if (view.api === 'jsonrpc' && body !== null && typeof body === 'object') {
    const b = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    if (b.method === 'tools/call') return { tool: b.params?.name, args: b.params?.arguments ?? {} };
    return { rpc: b.method, params: (b as { params?: unknown }).params ?? null };
  }
  return { method: view.method, path: view.path, query: view.query, body };
}

export interface RequestKeys {
  exact: string;
  normalised: string;
  structural: string;
}

export function keysOf(req: LiveRequest, view: RequestView = viewOf(req)): RequestKeys {
  return {
    exact: `${req.method.toUpperCase()} ${req.url}\n${forMatching(req).bodyText ?? ''}`,
    normalised: canonicalJson(view),
    structural: canonicalJson(structuralOf(view)),
  };
}

const MAX_SHOWN = 400;

function shown(value: unknown): unknown {
  if (typeof value === 'string' && value.length > MAX_SHOWN)
    return `${value.slice(0, MAX_SHOWN)}… (${value.length} chars)`;
  return value;
}

function flatten(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(prefix, []);
    for (const [i, v] of value.entries()) flatten(v, `${prefix}[${i}]`, out);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) out.set(prefix, {});
    for (const k of keys) flatten((value as Record<string, unknown>)[k], prefix ? `${prefix}.${k}` : k, out);
    return;
  }
  out.set(prefix, value);
}

/** Leaf-by-leaf differences between two values (paths like `body.messages[0].content`). */
export function fieldDiff(expected: unknown, actual: unknown, limit = 50): FieldDiff[] {
  const a = new Map<string, unknown>();
  const b = new Map<string, unknown>();
  flatten(expected, '', a);
  flatten(actual, '', b);
  const diffs: FieldDiff[] = [];
  const paths = new Set([...a.keys(), ...b.keys()]);
  for (const path of paths) {
    const e = a.get(path);
    const g = b.get(path);
    // A leaf one side lacks differs even from null.
    if ((e === undefined) === (g === undefined) && canonicalJson(e) === canonicalJson(g)) continue;
    // A field one side lacks shows as null (JSON has no undefined).
    diffs.push({ path: path || '(root)', expected: shown(e) ?? null, actual: shown(g) ?? null });
    if (diffs.length >= limit) break;
  }
  return diffs;
}

/** How many leaves differ (uncapped): the distance used to find the nearest recorded request. */
export function distance(expected: unknown, actual: unknown): number {
  return fieldDiff(expected, actual, Number.MAX_SAFE_INTEGER).length;
}
