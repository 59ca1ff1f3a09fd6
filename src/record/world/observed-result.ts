// A read's own rows as the snapshot's JSON images, from the text the server sent for them: when a
// read returned every column of a table's rows (SELECT * or each column by name), the rows it saw
// are their images as of its statement, and reading them again by key on tapedeck's connection
// (a statement and a round trip on the user's database for every read) is not needed.
//
// The images must be exactly what the keyed read would give (Catalog.rowJson: to_jsonb, with
// bigint/numeric as text and timestamptz as UTC ISO with microseconds). The agent's parsed values
// cannot give that (pg makes a millisecond Date of a timestamptz; an application may install its
// own type parsers), so the wire's text is kept, for reads only, and turned into the JSON form for
// the types where that is exact. Any other type, a value in another format (a session's DateStyle
// other than ISO, BC dates, infinity), binary results or a column missing: the keyed read, as
// before. A write's images (the jsonb its added RETURNING columns hand back) are read from their
// text too, never through the agent's parsers (writeImage).

import { normalizedKind } from '../../postgres/index.js';
import type { Row } from '../../recording/index.js';

/** A column of the table and where the read returned it. */
export interface ResultColumn {
  name: string;
  /** Catalog type (format_type), e.g. `integer`, `numeric(10,2)`, `timestamp with time zone`. */
  type: string;
  /** Position in the result's fields. */
  at: number;
  /** The type oid the server described the field with. */
  oid: number;
  /** The catalog holds it as its text (CatalogColumn.text: json, jsonb, their domains and arrays). */
  text?: boolean;
}

type Convert = (text: string) => unknown;

const ISO_TZ =
  /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const INTEGER = /^-?\d{1,10}$/;

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/**
 * timestamptz's ISO output ("2026-11-28 10:00:00.5+05:30") as to_char(v AT TIME ZONE 'UTC',
 * 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'); undefined for anything else.
 */
export function utcMicros(text: string): string | undefined {
  const m = ISO_TZ.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, sign, oh, om, os] = m as unknown as string[];
  const offset = (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0)) * (sign === '-' ? -1 : 1);
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s) - offset, 0);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) return undefined;
  return (
    `${pad(year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}` +
    `.${(frac ?? '').padEnd(6, '0')}Z`
  );
}

/** How one column's text becomes its JSON form, or undefined when that is not exact. */
function converterOf(type: string, oid: number, text: boolean): Convert | undefined {
  // A value held as its text (json-based: a domain's, an array's too) is the very text the server
  // sends for the column in the text format: its type's output function's, as `col::text` is.
  if (text) return (t) => t;
  if (type.endsWith(']')) return undefined;
  switch (oid) {
    case 16: // boolean
      return type === 'boolean' ? (t) => (t === 't' ? true : t === 'f' ? false : undefined) : undefined;
    case 21: // smallint
    case 23: // integer
      return type === 'smallint' || type === 'integer' ? (t) => (INTEGER.test(t) ? Number(t) : undefined) : undefined;
    case 20: // bigint, as text
      return type === 'bigint' ? (t) => t : undefined;
    case 1700: // numeric, as text
      return /^(numeric|decimal)(\(|$)/.test(type) ? (t) => t : undefined;
    case 25: // text
      return type === 'text' ? (t) => t : undefined;
    case 1043: // character varying
      return /^character varying(\(|$)/.test(type) ? (t) => t : undefined;
    case 1042: // character(n): the padded text, as to_jsonb gives it
      return /^character(\(|$)/.test(type) ? (t) => t : undefined;
    case 2950: // uuid
      return type === 'uuid' ? (t) => t : undefined;
    case 1082: // date (ISO DateStyle only)
      return type === 'date' ? (t) => (ISO_DATE.test(t) ? t : undefined) : undefined;
    case 1184: // timestamp with time zone, with or without a precision
      return normalizedKind(type) === 'tstz' ? utcMicros : undefined;
    default:
      return undefined;
  }
}

/**
 * Turns rows of a table into images, from the text of each column; undefined when the read did
 * not return every column of the table, or a column's type or a value cannot be turned exactly
 * (then the caller reads the rows again by key). `raw[i]` is the i-th result row's field texts.
 */
export function imagesFromText(
  columns: ResultColumn[],
  tableColumns: readonly string[],
  raw: ReadonlyArray<ReadonlyArray<unknown>>,
): Array<Record<string, unknown>> | undefined {
  const byName = new Map<string, { at: number; convert: Convert }>();
  for (const c of columns) {
    if (byName.has(c.name)) continue;
    const convert = converterOf(c.type, c.oid, c.text === true);
    if (convert === undefined) return undefined;
    byName.set(c.name, { at: c.at, convert });
  }
  const plan: Array<{ name: string; at: number; convert: Convert }> = [];
  // In jsonb's key order (shorter keys first, then by bytes), as the keyed read's images come.
  const names = [...tableColumns].sort((a, b) => {
    const [x, y] = [Buffer.from(a), Buffer.from(b)];
    return x.length - y.length || Buffer.compare(x, y);
  });
  for (const name of names) {
    const c = byName.get(name);
    if (c === undefined) return undefined;
    plan.push({ name, ...c });
  }
  const images: Array<Record<string, unknown>> = [];
  for (const row of raw) {
    const image: Record<string, unknown> = {};
    for (const { name, at, convert } of plan) {
      const text = row[at];
      if (text === null) {
        image[name] = null;
        continue;
      }
      if (typeof text !== 'string') return undefined;
      let value: unknown;
      try {
        value = convert(text);
      } catch {
        return undefined;
      }
      if (value === undefined) return undefined;
      image[name] = value;
    }
    images.push(image);
  }
  return images;
}

/**
 * A write's row image (jsonb) as tapedeck reads it: the server's text, parsed here, whatever the
 * statement's parsers made of it (Prisma's adapter-pg keeps jsonb as text, to parse JSON itself; a
 * reviver may make dates of strings); without the text (a pg with no Result hook), what they made,
 * parsed when they kept it as text. undefined: no image (NULL), or nothing that is a row.
 */
export function writeImage(text: unknown, parsed: unknown): Row | undefined {
  let value = typeof text === 'string' ? text : parsed;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Row) : undefined;
}
