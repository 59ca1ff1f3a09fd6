// The database description's values as data (src/recording/schema.ts, db.json): a Postgres name, a
// column default, an expression (a generated column's, a CHECK's) and a type or operator class not
// built in. A sandbox composes its SQL from these parts, never from recorded SQL.
import * as z from 'zod';

/** A Postgres name as the catalog holds it: 1 to 63 bytes, no NUL. Always quoted where it is used. */
export const PgNameSchema = z
  .string()
  .min(1)
  .refine((name) => Buffer.byteLength(name, 'utf8') <= 63 && !name.includes('\u0000'), {
    message: 'expected a Postgres name (1 to 63 bytes, no NUL)',
  });

/**
 * The defaults the database server fills from its own clock. A replay's sandbox evaluates them
 * again, at replay time, so such a column may hold another value than the recorded run's: the
 * state diff marks a row whose only difference is there (`serverClock`) and an exact replay's
 * end-state check shows it without calling it a difference.
 */
export const SERVER_CLOCK_FUNCTIONS = [
  'now',
  'current_timestamp',
  'current_date',
  'current_time',
  'localtimestamp',
  'clock_timestamp',
  'statement_timestamp',
  'transaction_timestamp',
] as const;

const isServerClock = (name: string): boolean => (SERVER_CLOCK_FUNCTIONS as readonly string[]).includes(name);

/** The column defaults a sandbox recreates; any other default expression is left out of the description. */
export const DEFAULT_FUNCTIONS = [
  ...SERVER_CLOCK_FUNCTIONS,
  'gen_random_uuid',
  'random',
  // uuid-ossp's: rendered only when the sandbox holds the extension (src/postgres/extensions.ts).
  'uuid_generate_v1',
  'uuid_generate_v1mc',
  'uuid_generate_v4',
] as const;

/** An interval constant as Postgres prints it (`14 days`, `01:30:00`, `1 mon 2 days -00:00:01`): data, never SQL. */
export const IntervalTextSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[0-9a-z :.+-]+$/, 'expected an interval as Postgres prints it');

/**
 * A column default as data: the next value of a sequence, a constant, or one of a few built-in
 * functions, a clock's `plus` or `minus` an interval (`now() + '14 days'::interval`: an expiry).
 */
export const ColumnDefaultSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sequence'), schema: PgNameSchema, name: PgNameSchema }).strict(),
  z.object({ kind: z.literal('value'), value: z.union([z.string(), z.number(), z.boolean(), z.null()]) }).strict(),
  z
    .object({
      kind: z.literal('function'),
      name: z.enum(DEFAULT_FUNCTIONS),
      plus: IntervalTextSchema.optional(),
      minus: IntervalTextSchema.optional(),
    })
    .strict()
    .refine((d) => (d.plus === undefined && d.minus === undefined) || isServerClock(d.name), {
      message: 'expected an interval added to a clock function only',
    }),
]);

/**
 * The operators and functions an expression as data may use (a generated column's, a CHECK's;
 * src/postgres/sql.ts renders them): arithmetic, comparison, LIKE (`~~`) and regex matches, boolean
 * logic, and IS [NOT] NULL.
 */
export const GENERATED_OPERATORS = [
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  '=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  '~~',
  '!~~',
  '~~*',
  '!~~*',
  '~',
  '~*',
  '!~',
  '!~*',
  'and',
  'or',
  'not',
  'is null',
  'is not null',
] as const;
export const GENERATED_FUNCTIONS = [
  'abs',
  'array_length',
  'btrim',
  'cardinality',
  'ceil',
  'char_length',
  'coalesce',
  'concat',
  'concat_ws',
  'floor',
  'greatest',
  'least',
  'left',
  'length',
  'lower',
  'ltrim',
  'md5',
  'nullif',
  'octet_length',
  'replace',
  'right',
  'round',
  'rtrim',
  'substr',
  'trunc',
  'upper',
] as const;

/**
 * An expression as data: a generated column's (`GENERATED ALWAYS AS (qty * price) STORED`) or a
 * CHECK constraint's (`qty > 0 AND status = ANY (ARRAY['a', 'b'])`): columns of its table,
 * constants, arrays, allow-listed operators, functions and casts. A sandbox composes its SQL from
 * these parts; an expression outside them is not described (a generated column is then a plain
 * one, a check is named in `unbuilt`).
 */
export type GeneratedExpr =
  | { column: string }
  | { value: string | number | boolean | null }
  | { op: (typeof GENERATED_OPERATORS)[number]; args: GeneratedExpr[]; quantified?: 'any' | 'all' }
  | { array: GeneratedExpr[] }
  | { call: (typeof GENERATED_FUNCTIONS)[number]; args: GeneratedExpr[] }
  | { cast: string; arg: GeneratedExpr };

export const MAX_GENERATED_DEPTH = 32;
export const depthOf = (e: GeneratedExpr): number =>
  'args' in e
    ? 1 + Math.max(0, ...e.args.map(depthOf))
    : 'array' in e
      ? 1 + Math.max(0, ...e.array.map(depthOf))
      : 'arg' in e
        ? 1 + depthOf(e.arg)
        : 1;

export const GeneratedExprSchema: z.ZodType<GeneratedExpr> = z.lazy(() =>
  z.union([
    z.object({ column: PgNameSchema }).strict(),
    z.object({ value: z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]) }).strict(),
    z
      .object({
        op: z.enum(GENERATED_OPERATORS),
        args: z.array(GeneratedExprSchema).min(1).max(2),
        /** `a = ANY (b)`, `a <> ALL (b)`: the operator against each element of the array b. */
        quantified: z.enum(['any', 'all']).optional(),
      })
      .strict(),
    z.object({ array: z.array(GeneratedExprSchema).max(10_000) }).strict(),
    z.object({ call: z.enum(GENERATED_FUNCTIONS), args: z.array(GeneratedExprSchema).max(16) }).strict(),
    z.object({ cast: z.string().min(1).max(200), arg: GeneratedExprSchema }).strict(),
  ]),
);

/**
 * A type or operator class not built into Postgres, by its qualified name: an enum's, a domain's, or
 * an extension's (`extension` names it). A sandbox names it only when it built it or created the
 * extension; otherwise the column is built from the type's text (src/postgres/sql.ts sqlType).
 */
export const PgObjectRefSchema = z
  .object({ schema: PgNameSchema, name: PgNameSchema, extension: PgNameSchema.optional() })
  .strict();
