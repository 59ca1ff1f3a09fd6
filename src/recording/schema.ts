// The Recording contract: zod schemas for the manifest, the event envelope, every event payload and
// the world snapshots. Every module reads and writes recordings through these names; each part of
// the format lives in a module of its own, re-exported here:
//   schema-manifest.ts  manifest.json (FORMAT, the agent, the world, the replay's settings)
//   schema-events.ts    the state and event types, each event kind's payload, the envelope
//   schema-exchange.ts  bodies, HTTP exchanges, usage, drawn values, WebSocket turns
//   schema-files.ts     a file's entry (inline or blob) and fs.json
//   schema-db.ts        db.json: rows, tables, sequences, the snapshot (its values: schema-db-expr.ts)
//   schema-fields.ts    the field types they share (sha256, ISO time, headers, URL)
// A payload's schema and the manifest fields that name it change together: read both.

export * from './schema-db.js';
export {
  ColumnDefaultSchema,
  DEFAULT_FUNCTIONS,
  GENERATED_FUNCTIONS,
  GENERATED_OPERATORS,
  type GeneratedExpr,
  GeneratedExprSchema,
  IntervalTextSchema,
  PgNameSchema,
  PgObjectRefSchema,
  SERVER_CLOCK_FUNCTIONS,
} from './schema-db-expr.js';
export * from './schema-events.js';
export * from './schema-exchange.js';
export { AbsoluteUrl, HeaderName, HeaderValue, IsoTime, RowSchema } from './schema-fields.js';
export * from './schema-files.js';
export * from './schema-manifest.js';
