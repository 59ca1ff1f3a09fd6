// The recording format's field types shared by its parts (src/recording/schema.ts): a sha256, an
// ISO time, HTTP headers, an absolute URL, a database row. Internal to the schema's modules.
import * as z from 'zod';

export const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected a lowercase hex sha256');
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
/** A real calendar time, as the writer writes it (toISOString): what the engines and the warehouse take as a time. */
function isIsoTime(text: string): boolean {
  const m = ISO_TIME.exec(text);
  if (!m || !Number.isFinite(Date.parse(text))) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
export const IsoTime = z.string().refine(isIsoTime, 'expected an ISO 8601 time such as 2026-11-29T18:00:00.000Z');
/**
 * A header as HTTP carries it (a replay serves them back): a token for a name (HTTP/2's pseudo-headers,
 * `:authority`, as a HAR shows them), no carriage return or NUL in a value. A newline is the format's
 * own separator of repeated values (Set-Cookie; every repeated header of an imported HAR).
 */
export const HeaderName = z.string().regex(/^:?[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'expected an HTTP header name');
export const HeaderValue = z
  .string()
  .regex(/^[^\r\u0000]*$/, 'expected a header value without a carriage return or NUL');
export const Headers = z.record(HeaderName, HeaderValue);
/** A URL every engine can parse (`new URL`): the replay matches, routes and exports by it. */
export const AbsoluteUrl = z.string().refine((url) => URL.canParse(url), 'expected an absolute URL');
/**
 * A database row by column name, as a db.changed event and db.json hold it. Here, not in schema-db.ts:
 * the events need it without the snapshot schemas, which a reader of events alone never builds.
 */
export const RowSchema = z.record(z.string(), z.unknown());
