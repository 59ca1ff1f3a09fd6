// The recorded exchanges of a recording as the answerers read them: for a mock handler's context
// (`ctx.recorded(...)`) and for the simulator's examples. Data only: bodies parsed, never executed.
import type { RecordedExchange } from '../../config/index.js';
import { streamBytes } from '../../providers/index.js';
import type { Recording } from '../../recording/index.js';
import { bodyBytesOf, indexRecording } from '../match.js';
import { parseJson } from '../normalize.js';
import { matchRequestUrl } from './msw.js';

/** A body as a handler reads it: JSON parsed (unless `raw`), else text; bytes that are not UTF-8 text stay bytes. */
function parsed(bytes: Buffer | undefined, raw = false): unknown {
  if (bytes === undefined || bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) return bytes;
  if (raw) return text;
  const json = parseJson(text);
  return json.ok ? json.value : text;
}

/** Every recorded HTTP tool exchange (model calls left out), in recorded order. */
export function recordedExchanges(recording: Recording): RecordedExchange[] {
  const out: RecordedExchange[] = [];
  for (const call of indexRecording(recording)) {
    const x = call.exchange;
    if (call.kind !== 'tool' || !x) continue;
    let path = x.request.url;
    try {
      const u = new URL(x.request.url);
      path = `${u.pathname}${u.search}`;
    } catch {}
    const response = x.response;
    const requestBody = parsed(bodyBytesOf(recording, x.request.body));
    // A stream's body is its chunks' bytes (base64 chunks decoded), its text as streamed.
    const body = response?.chunks
      ? parsed(streamBytes(response.chunks), true)
      : parsed(bodyBytesOf(recording, response?.body));
    out.push({
      step: call.step,
      method: x.request.method.toUpperCase(),
      url: x.request.url,
      path,
      ...(requestBody !== undefined ? { requestBody } : {}),
      ...(response ? { status: response.status, headers: response.headers } : {}),
      ...(body !== undefined ? { body } : {}),
    });
  }
  return out;
}

export interface ExchangeFilter {
  method?: string;
  /** An msw-style path pattern (`/passengers/:id`) or a RegExp over the path. */
  path?: string | RegExp;
  /** Only exchanges recorded against this origin. */
  origin?: string;
}

/** The exchanges that pass `filter`. */
export function filterExchanges(all: RecordedExchange[], filter: ExchangeFilter = {}): RecordedExchange[] {
  return all.filter((x) => {
    if (filter.method && x.method !== filter.method.toUpperCase()) return false;
    let url: URL;
    try {
      url = new URL(x.url);
    } catch {
      return false;
    }
    if (filter.origin && url.origin !== new URL(filter.origin).origin) return false;
    if (filter.path instanceof RegExp) return filter.path.test(url.pathname);
    if (typeof filter.path === 'string') return matchRequestUrl(url, filter.path, url.origin).matches;
    return true;
  });
}

const segmentsOf = (path: string) => path.split('?')[0]?.split('/').filter(Boolean) ?? [];
/** A path segment that names one record (has a digit, or is long and opaque) rather than a collection. */
const isId = (segment: string) => /\d/.test(segment) || /^[0-9a-f-]{16,}$/i.test(segment);

/** How a recorded exchange relates to the call being answered. */
export type EndpointMatch = 'same path' | 'same endpoint' | 'same path shape' | 'same API';
const MATCHES: readonly EndpointMatch[] = ['same path', 'same endpoint', 'same path shape', 'same API'];

/**
 * The recorded exchanges of the same endpoint as (method, url), most alike first: the same path
 * (`same path`), then the same method and path shape — ids in the same places, `/passengers/P-100`
 * for `/passengers/P-102` (`same endpoint`), then the shape under another method, then other calls
 * of the same origin, as examples of the API's style (`same API`).
 */
export function sameEndpoint(
  all: readonly RecordedExchange[],
  method: string,
  url: string,
  limit: number,
): Array<RecordedExchange & { match: EndpointMatch }> {
  const target = new URL(url);
  const want = segmentsOf(target.pathname);
  const rank = (x: RecordedExchange): number => {
    let u: URL;
    try {
      u = new URL(x.url);
    } catch {
      return 9;
    }
    const sameMethod = x.method === method.toUpperCase();
    const got = segmentsOf(u.pathname);
    if (sameMethod && u.pathname === target.pathname) return 0;
    const sameShape =
      got.length === want.length && got.every((seg, i) => seg === want[i] || (isId(seg) && isId(want[i] ?? '')));
    if (sameMethod && sameShape) return 1;
    if (sameShape) return 2;
    return u.port === target.port && u.hostname === target.hostname ? 3 : 9;
  };
  return all
    .map((x, i) => ({ x, r: rank(x), i }))
    .filter((e) => e.r < 9)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, limit)
    .map((e) => ({ ...e.x, match: MATCHES[e.r] as EndpointMatch }));
}
