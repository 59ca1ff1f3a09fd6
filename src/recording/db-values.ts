// A row's values as a reader of facts needs them. The rows keep a json/jsonb column's value as the
// text Postgres prints (`values: 'text'` on the column, schema-db.ts): exact, and compared as text
// by the diffs; a reader that looks inside the value (a contract's `where`/`equals`) parses it here,
// and only here (an array of json values, `jsonb[]`, as a JSON array of them parsed, as to_jsonb
// gives it). A recording made before holds parsed JSON already, and is read as it is.
import type { DbColumn, DbTable, Row } from './types.js';

/** Whether the rows hold `column`'s values as their text. */
export const heldAsText = (column: Pick<DbColumn, 'values'>): boolean => column.values === 'text';

type Column = Pick<DbColumn, 'name' | 'type' | 'values' | 'udt'>;
/** The snapshot's domains (`DbSnapshot.domains`): a domain over an array holds an array's text. */
export type Domains = ReadonlyArray<{ schema: string; name: string; type: string; udt?: DbColumn['udt'] }>;

/**
 * Whether a column's values are arrays: its type is one (`jsonb[]`, `app.doc[]`), or a domain over
 * one; undefined when that cannot be told (a domain, and no domains given).
 */
function arrayTyped(c: Pick<Column, 'type' | 'udt'>, domains: Domains | undefined, depth = 0): boolean | undefined {
  if (c.type.endsWith(']')) return true;
  if (c.udt === undefined || c.udt.extension !== undefined || depth > 32) return false;
  if (domains === undefined) return undefined;
  const udt = c.udt;
  const domain = domains.find((d) => d.schema === udt.schema && d.name === udt.name);
  return domain !== undefined && arrayTyped(domain, domains, depth + 1) === true;
}

/** One JSON text as JSON (the text itself when it is not JSON). */
function json(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A value held as its text, as to_jsonb would have given it: a JSON text parsed; an array's text
 * (`jsonb[]`, an array of a domain over json: array_out's `{"{\"a\": 1}",NULL}`) as a JSON array
 * of its elements parsed, nested as its dimensions are. A domain's column without the domains to
 * tell by: JSON when its text is, else an array's (an empty `{}` then reads as an object).
 */
function parsed(value: unknown, column: Column, domains: Domains | undefined): unknown {
  if (typeof value !== 'string') return value;
  const array = arrayTyped(column, domains);
  if (array !== true) {
    const out = json(value);
    if (array === false || out !== value || !/^\s*[{[]/.test(value)) return out;
  }
  const elements = pgArray(value);
  return elements === undefined ? value : mapLeaves(elements);
}

function mapLeaves(value: unknown): unknown {
  return Array.isArray(value) ? value.map(mapLeaves) : typeof value === 'string' ? json(value) : value;
}

/**
 * A Postgres array's text form (`{a,"b c",NULL,{…}}`, after `[0:1]=` bounds when it has them) as
 * nested arrays of its element texts, null for NULL; undefined when the text is not one.
 */
function pgArray(text: string): unknown[] | undefined {
  let i = 0;
  const bounds = /^(?:\[-?\d+:-?\d+\])+=/.exec(text);
  if (bounds !== null) i = bounds[0].length;
  const space = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  // Postgres arrays have at most 6 dimensions: a deeper text (a hostile recording's) is not one.
  const list = (depth: number): unknown[] | undefined => {
    if (text[i] !== '{' || depth > 6) return undefined;
    i++;
    const out: unknown[] = [];
    space();
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      space();
      if (text[i] === '{') {
        const inner = list(depth + 1);
        if (inner === undefined) return undefined;
        out.push(inner);
      } else if (text[i] === '"') {
        let s = '';
        for (i++; i < text.length && text[i] !== '"'; i++) s += text[i] === '\\' ? (text[++i] ?? '') : text[i];
        if (text[i] !== '"') return undefined;
        i++;
        out.push(s);
      } else {
        let s = '';
        for (; i < text.length && text[i] !== ',' && text[i] !== '}'; i++)
          s += text[i] === '\\' ? (text[++i] ?? '') : text[i];
        s = s.trim();
        if (s === '') return undefined;
        out.push(s.toUpperCase() === 'NULL' ? null : s);
      }
      space();
      if (text[i] === ',') i++;
      else if (text[i] === '}') {
        i++;
        return out;
      } else return undefined;
    }
  };
  const out = list(1);
  space();
  return out !== undefined && i === text.length ? out : undefined;
}

/**
 * `table`'s columns held as text whose values a reader sees parsed; empty for a recording made
 * before (nothing to parse).
 */
function textColumns(table: { columns: readonly Column[] }): Column[] {
  return table.columns.filter(heldAsText);
}

/**
 * `row` with each value held as text parsed as JSON (SQL NULL stays null; JSON `null` becomes
 * null). `domains`: the snapshot's, which say whether a domain's column holds arrays.
 */
export function rowFacts(table: { columns: readonly Column[] }, row: Row, domains?: Domains): Row {
  return parseColumns(row, textColumns(table), domains);
}

function parseColumns(row: Row, columns: readonly Column[], domains: Domains | undefined): Row {
  if (columns.length === 0) return row;
  const out: Row = { ...row };
  for (const c of columns) if (c.name in out) out[c.name] = parsed(out[c.name], c, domains);
  return out;
}

/**
 * Two descriptions of one table whose rows hold values in two forms (a recording made before,
 * against a replay's end state): the rows of each, with the columns one holds as text and the other
 * does not parsed, so that both compare in one form. Same forms: the rows as they are.
 */
export function rowsInOneForm(
  a: Pick<DbTable, 'columns' | 'rows'> | undefined,
  b: Pick<DbTable, 'columns' | 'rows'> | undefined,
  domains?: Domains,
): [Row[], Row[]] {
  const rowsA = a?.rows ?? [];
  const rowsB = b?.rows ?? [];
  if (a === undefined || b === undefined) return [rowsA, rowsB];
  const textA = textColumns(a);
  const textB = textColumns(b);
  const held = (list: Column[], name: string) => list.some((c) => c.name === name);
  const onlyA = textA.filter((c) => !held(textB, c.name) && b.columns.some((d) => d.name === c.name));
  const onlyB = textB.filter((c) => !held(textA, c.name) && a.columns.some((d) => d.name === c.name));
  const parse = (rows: Row[], columns: Column[]) =>
    columns.length === 0 ? rows : rows.map((r) => parseColumns(r, columns, domains));
  return [parse(rowsA, onlyA), parse(rowsB, onlyB)];
}
