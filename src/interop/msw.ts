// msw export: an ES module of msw request handlers that answer a recording's HTTP calls, for tests
// that mock by hand (`setupServer(...handlers)`). Routes match by method and path on any origin
// (recordings hold ephemeral ports); within a route, a request gets the first unanswered recorded
// call with the same URL and body, else the next unanswered one, else the last; streamed (SSE)
// answers are streamed chunk by chunk (a binary stream's chunks as bytes).
import { bodyBytes } from '../recording/index.js';
import type { HttpExchangePayload, Recording } from '../recording/types.js';

/** Headers that describe the wire, not the content: the recorded bodies are decoded. */
const WIRE_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'content-encoding', 'keep-alive']);

interface MswCall {
  method: string;
  url: string;
  body: string | null;
  status: number;
  statusText?: string;
  headers: Array<[string, string]>;
  text?: string;
  base64?: string;
  /** A stream's chunks: text, or `{ base64 }` for a binary stream's (an AWS event stream, gRPC). */
  chunks?: Array<string | { base64: string }>;
}

function callsOf(recording: Recording): MswCall[] {
  const out: MswCall[] = [];
  for (const e of recording.events) {
    if (e.type !== 'http.exchange') continue;
    const x = e.payload as HttpExchangePayload;
    if (!x.response) continue;
    const headers: Array<[string, string]> = [];
    for (const [name, value] of Object.entries(x.response.headers)) {
      if (WIRE_HEADERS.has(name.toLowerCase())) continue;
      for (const v of value.split('\n')) headers.push([name, v]);
    }
    const request = x.request.body ? bodyBytes(recording, x.request.body).toString('utf8') : null;
    const call: MswCall = {
      method: x.request.method.toUpperCase(),
      url: x.request.url,
      body: request,
      status: x.response.status,
      headers,
    };
    if (x.response.statusText) call.statusText = x.response.statusText;
    if (x.response.chunks)
      call.chunks = x.response.chunks.map((c) => (c.encoding === 'base64' ? { base64: c.data } : c.data));
    else {
      const bytes = bodyBytes(recording, x.response.body);
      const text = bytes.toString('utf8');
      if (Buffer.from(text, 'utf8').equals(bytes)) call.text = text;
      else call.base64 = bytes.toString('base64');
    }
    out.push(call);
  }
  return out;
}

/** The module's source text. */
export function recordingToMsw(recording: Recording): string {
  const calls = callsOf(recording);
  const routes = [...new Set(calls.map((c) => `${c.method} ${new URL(c.url).pathname}`))];
  return `// msw request handlers answering the ${calls.length} HTTP calls of recording ${JSON.stringify(recording.manifest.id)}
// (written by \`tapedeck export --msw\`). Use: setupServer(...handlers).listen() — msw 2.
// A request gets the first unanswered recorded call with the same method, URL and body; else the
// next unanswered call of its route; else the route's last call again. Routes match any origin.
import { http } from 'msw';

const CALLS = ${JSON.stringify(calls, null, 1)};

const ROUTES = ${JSON.stringify(routes)};

function canonical(text) {
  if (text === null || text === '') return '';
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text;
  }
}
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
  return value;
}

const answered = new Set();

function fromBase64(text) {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function answer(call) {
  const init = { status: call.status, statusText: call.statusText, headers: call.headers };
  if (call.chunks) {
    const encoder = new TextEncoder();
    const stream = new ReadableStream({
      start(controller) {
        for (const chunk of call.chunks)
          controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : fromBase64(chunk.base64));
        controller.close();
      },
    });
    return new Response(stream, init);
  }
  if (call.base64 !== undefined) return new Response(fromBase64(call.base64), init);
  return new Response(call.text === '' && [204, 304].includes(call.status) ? null : call.text, init);
}

/** Resets which recorded calls were answered (call it between tests). */
export function resetRecording() {
  answered.clear();
}

export const handlers = ROUTES.map((route) => {
  const [method, path] = [route.slice(0, route.indexOf(' ')), route.slice(route.indexOf(' ') + 1)];
  const mine = CALLS.map((call, index) => ({ call, index })).filter(
    ({ call }) => call.method === method && new URL(call.url).pathname === path,
  );
  return http[method.toLowerCase()](\`*\${path}\`, async ({ request }) => {
    const body = canonical(method === 'GET' || method === 'HEAD' ? null : await request.clone().text());
    const search = new URL(request.url).search;
    const open = mine.filter(({ index }) => !answered.has(index));
    const hit =
      open.find(({ call }) => new URL(call.url).search === search && canonical(call.body) === body) ??
      open[0] ??
      mine[mine.length - 1];
    answered.add(hit.index);
    return answer(hit.call);
  });
});
`;
}
