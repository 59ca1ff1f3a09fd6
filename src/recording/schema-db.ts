// The recording format's database description (src/recording/schema.ts, db.json): a row, a table
// (columns, keys, indexes, checks, exclusions, partitions), a sequence, and the snapshot with its
// enums, extensions, domains and what a sandbox does not rebuild. Its values: schema-db-expr.ts.
import * as z from 'zod';
import {
  ColumnDefaultSchema,
  depthOf,
  GeneratedExprSchema,
  MAX_GENERATED_DEPTH,
  PgNameSchema,
  PgObjectRefSchema,
} from './schema-db-expr.js';
import { RowSchema } from './schema-fields.js';

export const DbColumnSchema = z
  .object({
    name: PgNameSchema,
    /** The type as the catalog prints it (format_type); a sandbox maps it onto an allow-list, else text. */
    type: z.string().min(1).max(200),
    nullable: z.boolean(),
    default: ColumnDefaultSchema.optional(),
    identity: z.enum(['always', 'by default']).optional(),
    /** The enum type of the column (or of its array's elements), when the snapshot describes it in `enums`. */
    enum: z.object({ schema: PgNameSchema, name: PgNameSchema }).strict().optional(),
    /** The type (or its array's element type) when it is not built in: a domain's or an extension's. */
    udt: PgObjectRefSchema.optional(),
    /**
     * A stored generated column: its expression as data, or `null` when the expression is outside
     * what GeneratedExpr describes (the sandbox then holds the column as a plain one).
     */
    generated: GeneratedExprSchema.nullable()
      .refine((e) => e === null || depthOf(e) <= MAX_GENERATED_DEPTH, {
        message: `expected an expression at most ${MAX_GENERATED_DEPTH} deep`,
      })
      .optional(),
    /**
     * How the rows (db.json and db.changed) hold this column's values: `text`, as the value's text
     * Postgres prints (`col::text`: a json's own text, jsonb's numbers at full precision, JSON
     * `null` as the string "null", SQL NULL as null). Absent: the value as to_jsonb gives it (a
     * recording made before, whose json/jsonb values are parsed JSON). Readers: src/recording/db-values.ts.
     */
    values: z.literal('text').optional(),
  })
  .strict();

const PgColumns = z.array(PgNameSchema).min(1).max(64);
const BoundedExprSchema = GeneratedExprSchema.refine((e) => depthOf(e) <= MAX_GENERATED_DEPTH, {
  message: `expected an expression at most ${MAX_GENERATED_DEPTH} deep`,
});
/** The operators an exclusion constraint may compare with (btree_gist's, ranges', geometry's). */
export const EXCLUSION_OPERATORS = ['=', '<>', '&&', '@>', '<@', '-|-', '~=', '&<', '&>', '<<', '>>'] as const;
/** A partition bound's value: a constant (Postgres converts it to the key's type) or MINVALUE / MAXVALUE. */
const BoundValueSchema = z.union([
  z.string().max(10_000),
  z.number(),
  z.boolean(),
  z.null(),
  z.object({ bound: z.enum(['minvalue', 'maxvalue']) }).strict(),
]);
export const PartitionBoundSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('default') }).strict(),
  z.object({ kind: z.literal('list'), values: z.array(BoundValueSchema).min(1).max(10_000) }).strict(),
  z
    .object({
      kind: z.literal('range'),
      from: z.array(BoundValueSchema).min(1).max(32),
      to: z.array(BoundValueSchema).min(1).max(32),
    })
    .strict(),
  z
    .object({
      kind: z.literal('hash'),
      modulus: z.number().int().min(1).max(1_000_000),
      remainder: z.number().int().min(0).max(1_000_000),
    })
    .strict(),
]);
/** PARTITION BY: the strategy and the key's columns (a key with an expression is not described). */
const PartitionBySchema = z.object({ strategy: z.enum(['range', 'list', 'hash']), columns: PgColumns }).strict();
const FK_ACTIONS = ['no action', 'restrict', 'cascade', 'set null', 'set default'] as const;

/** CHECK constraints of a table's own (inherited ones come with their parent's), the expression as data. */
const DbChecksSchema = z
  .array(z.object({ name: PgNameSchema, expression: BoundedExprSchema, noInherit: z.boolean().optional() }).strict())
  .max(1000);

/** An index on plain columns (a table's, or one a partition has of its own). */
const DbIndexSchema = z
  .object({
    name: PgNameSchema,
    columns: PgColumns,
    unique: z.boolean(),
    /** hnsw and ivfflat: pgvector's, built when the sandbox holds the extension. */
    method: z.enum(['btree', 'hash', 'gin', 'gist', 'brin', 'spgist', 'hnsw', 'ivfflat']),
    /** Each column's operator class when it is not its type's default (`gin_trgm_ops`), else null. */
    opclasses: z.array(PgObjectRefSchema.nullable()).max(64).optional(),
    /** Its storage parameters that shape what an approximate index answers (pgvector's m, ef_construction, lists). */
    options: z
      .object({
        m: z.number().int().min(2).max(1000).optional(),
        ef_construction: z.number().int().min(4).max(10_000).optional(),
        lists: z.number().int().min(1).max(1_000_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export const DbTableSchema = z
  .object({
    schema: PgNameSchema,
    name: PgNameSchema,
    columns: z.array(DbColumnSchema).max(1600),
    primaryKey: z.array(PgNameSchema).max(64),
    /** The primary key is DEFERRABLE (checked at each statement's end, or at commit): rows may swap keys. */
    primaryKeyDeferrable: z.enum(['deferred', 'immediate']).optional(),
    /** Unique constraints (the primary key aside). */
    unique: z
      .array(
        z
          .object({ name: PgNameSchema, columns: PgColumns, deferrable: z.enum(['deferred', 'immediate']).optional() })
          .strict(),
      )
      .optional(),
    foreignKeys: z
      .array(
        z
          .object({
            name: PgNameSchema,
            columns: PgColumns,
            references: z.object({ schema: PgNameSchema, table: PgNameSchema, columns: PgColumns }).strict(),
            onDelete: z.enum(FK_ACTIONS).optional(),
            onUpdate: z.enum(FK_ACTIONS).optional(),
            /** DEFERRABLE, checked at commit (`deferred`) or at each statement until SET CONSTRAINTS says otherwise. */
            deferrable: z.enum(['deferred', 'immediate']).optional(),
          })
          .strict(),
      )
      .optional(),
    /** Indexes on plain columns that no constraint owns (expression and partial indexes are left out). */
    indexes: z.array(DbIndexSchema).optional(),
    /** The tables it inherits from (INHERITS); each table's rows are its own (read with ONLY). */
    inherits: z
      .array(z.object({ schema: PgNameSchema, name: PgNameSchema }).strict())
      .max(64)
      .optional(),
    /** CHECK constraints of its own (inherited ones come with their parent's), the expression as data. */
    checks: DbChecksSchema.optional(),
    /** EXCLUDE constraints on plain columns: each column with its operator class (null: the default) and operator. */
    exclusions: z
      .array(
        z
          .object({
            name: PgNameSchema,
            method: z.enum(['gist', 'spgist', 'btree', 'hash']),
            elements: z
              .array(
                z
                  .object({
                    column: PgNameSchema,
                    opclass: PgObjectRefSchema.nullable(),
                    operator: z.enum(EXCLUSION_OPERATORS),
                  })
                  .strict(),
              )
              .min(1)
              .max(32),
            deferrable: z.enum(['deferred', 'immediate']).optional(),
          })
          .strict(),
      )
      .max(1000)
      .optional(),
    /** A partitioned table: its partitioning; its rows are those of every partition. */
    partitionBy: PartitionBySchema.optional(),
    /**
     * Its partitions, each after the one it is a partition of (`of`: this table or one of them, a
     * partition that is itself partitioned having `partitionBy`); their rows are the table's.
     */
    partitions: z
      .array(
        z
          .object({
            schema: PgNameSchema,
            name: PgNameSchema,
            of: z.object({ schema: PgNameSchema, name: PgNameSchema }).strict(),
            bound: PartitionBoundSchema,
            partitionBy: PartitionBySchema.optional(),
            /** Indexes the partition has of its own (not one of its parent's, which it gets as it is made). */
            indexes: z.array(DbIndexSchema).max(1000).optional(),
            /** CHECK constraints the partition has of its own (not its parent's, which it gets as it is made). */
            checks: DbChecksSchema.optional(),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /**
     * Rows sorted by primary key, values as JSON (timestamps as ISO strings, bigint/numeric as
     * strings, a column with `values: 'text'` as its text).
     */
    rows: z.array(RowSchema),
  })
  .strict()
  .superRefine((table, ctx) => {
    const texts = table.columns.filter((c) => c.values === 'text').map((c) => c.name);
    if (texts.length === 0) return;
    table.rows.forEach((row, i) => {
      for (const name of texts) {
        const v = row[name];
        if (v !== undefined && v !== null && typeof v !== 'string')
          ctx.addIssue({
            code: 'custom',
            path: ['rows', i, name],
            message: "expected the value's text (a string) or null",
          });
      }
    });
  });

const PgInteger = z.string().regex(/^-?\d{1,19}$/, 'expected an integer as a string');

/** A sequence and its position: exact replay hands out the ids the recorded run got. */
export const DbSequenceSchema = z
  .object({
    schema: PgNameSchema,
    name: PgNameSchema,
    type: z.enum(['smallint', 'integer', 'bigint']),
    start: PgInteger,
    increment: PgInteger,
    min: PgInteger,
    max: PgInteger,
    cycle: z.boolean(),
    /** last_value and is_called, as setval takes them. */
    last: PgInteger,
    called: z.boolean(),
    /** The column that owns it (serial and identity columns). */
    ownedBy: z.object({ table: PgNameSchema, column: PgNameSchema }).strict().optional(),
    /** An identity column's sequence: created with its table, not on its own. */
    identity: z.boolean().optional(),
  })
  .strict();

/**
 * db.json: the schema description (tables, columns, types, keys, indexes, sequences) and the rows
 * of every table. `ddl` is a readable rendering of the same description; it is never executed.
 * A recording made before the description existed has no `sequences`: the reader derives the
 * description from its `ddl` text (parsing, never running it).
 */
/** The kinds of schema object a sandbox does not rebuild: their definitions are SQL, never run from a recording. */
export const UNBUILT_KINDS = [
  'view',
  'materialized view',
  'trigger',
  'check',
  'policy',
  'rule',
  'function',
  'enum',
  'exclusion constraint',
  'partition',
  'default',
] as const;

export const DbSnapshotSchema = z
  .object({
    schemas: z.array(PgNameSchema),
    ddl: z.array(z.string()),
    tables: z.array(DbTableSchema),
    sequences: z.array(DbSequenceSchema).optional(),
    /** The enum types of the captured schemas, their labels in order (a sandbox creates them). */
    enums: z
      .array(
        z
          .object({ schema: PgNameSchema, name: PgNameSchema, labels: z.array(z.string().min(1).max(63)).max(10_000) })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /**
     * The extensions installed in the database (plpgsql aside) and their schemas: a sandbox creates
     * those on its allow-list it can load (src/postgres/extensions.ts), never by running recorded SQL.
     */
    extensions: z
      .array(z.object({ name: PgNameSchema, schema: PgNameSchema }).strict())
      .max(1000)
      .optional(),
    /**
     * The domains of the captured schemas: their base type (as a column's `type` and `udt`) and NOT NULL.
     * A sandbox creates each over its base type; their CHECKs are named in `unbuilt`.
     */
    domains: z
      .array(
        z
          .object({
            schema: PgNameSchema,
            name: PgNameSchema,
            type: z.string().min(1).max(200),
            udt: PgObjectRefSchema.optional(),
            nullable: z.boolean(),
            /**
             * Its CHECKs within the expression grammar, `VALUE` as the column `value` (a sandbox
             * builds them; the others stay named in `unbuilt`).
             */
            checks: z
              .array(z.object({ name: PgNameSchema, expression: BoundedExprSchema }).strict())
              .max(1000)
              .optional(),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /**
     * The composite types of the captured schemas (and those columns use): their attributes in
     * order, each a built-in type, or one named by `udt` (an enum, an extension's type, another
     * composite). A sandbox creates them; one over a domain or an undescribed type holds text.
     */
    composites: z
      .array(
        z
          .object({
            schema: PgNameSchema,
            name: PgNameSchema,
            attributes: z
              .array(
                z
                  .object({ name: PgNameSchema, type: z.string().min(1).max(200), udt: PgObjectRefSchema.optional() })
                  .strict(),
              )
              .min(1)
              .max(1600),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /**
     * The schemas an unqualified name is found in (current_schemas, as the database's or the
     * role's search_path sets it) when not only `public`: a sandbox's connections start with it.
     */
    searchPath: z.array(PgNameSchema).max(100).optional(),
    /**
     * The objects of the captured schemas the description leaves out, by name: what a replay says
     * its sandbox lacks.
     */
    unbuilt: z
      .array(
        z
          .object({
            kind: z.enum(UNBUILT_KINDS),
            schema: PgNameSchema,
            name: PgNameSchema,
            /** The table a trigger, check, policy, rule, partition or default belongs to (a domain's check: the domain). */
            table: PgNameSchema.optional(),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
  })
  .strict();
