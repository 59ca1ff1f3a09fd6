// A row's values as a reader of facts needs them. The rows keep a json/jsonb column's value as the
// text Postgres prints (`values: 'text'` on the column, schema-db.ts): exact, and compared as text
// by the diffs; a reader that looks inside the value (a contract's `where`/`equals`) parses it here,
// and only here. A recording made before holds parsed JSON already, and is read as it is.
import type { DbColumn, DbTable, Row } from './types.js';

/** Whether the rows hold `column`'s values as their text. */
export const heldAsText = (column: Pick<DbColumn, 'values'>): boolean => column.values === 'text';

/** A value held as its text, as JSON (the text itself when it is not JSON). */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * The names of `table`'s columns held as text whose values a reader sees parsed; empty for a
 * recording made before (nothing to parse).
 */
function textColumns(table: Pick<DbTable, 'columns'>): string[] {
  return table.columns.filter(heldAsText).map((c) => c.name);
}

/** `row` with each value held as text parsed as JSON (SQL NULL stays null; JSON `null` becomes null). */
export function rowFacts(table: Pick<DbTable, 'columns'>, row: Row): Row {
  return parseColumns(row, textColumns(table));
}

function parseColumns(row: Row, names: readonly string[]): Row {
  if (names.length === 0) return row;
  const out: Row = { ...row };
  for (const name of names) if (name in out) out[name] = parsed(out[name]);
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
): [Row[], Row[]] {
  const rowsA = a?.rows ?? [];
  const rowsB = b?.rows ?? [];
  if (a === undefined || b === undefined) return [rowsA, rowsB];
  const textA = new Set(textColumns(a));
  const textB = new Set(textColumns(b));
  const onlyA = [...textA].filter((c) => !textB.has(c) && b.columns.some((d) => d.name === c));
  const onlyB = [...textB].filter((c) => !textA.has(c) && a.columns.some((d) => d.name === c));
  const parse = (rows: Row[], names: string[]) => (names.length === 0 ? rows : rows.map((r) => parseColumns(r, names)));
  return [parse(rowsA, onlyA), parse(rowsB, onlyB)];
}
