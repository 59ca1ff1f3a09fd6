// The Postgres extensions a sandbox may create, by name: an extension's install script is code, so
// a recording's description (data) only ever picks from this list, and each is created with its
// name and schema quoted. PGlite loads an extension's files at start (its `extensions` option),
// so its sandboxes are made with the modules the description names.
import type { DbSnapshot } from '../recording/index.js';
import { type Queryable, quoteIdent } from './sql.js';

/**
 * The extensions a sandbox creates when a recording's database had them, in an order that puts an
 * extension after the ones it requires (cube before earthdistance), with the module PGlite loads.
 * vector's module is @electric-sql/pglite-pgvector, loaded when it is installed.
 */
const SANDBOX_EXTENSIONS = {
  citext: { pglite: 'citext' },
  hstore: { pglite: 'hstore' },
  ltree: { pglite: 'ltree' },
  pg_trgm: { pglite: 'pg_trgm' },
  'uuid-ossp': { pglite: 'uuid_ossp' },
  pgcrypto: { pglite: 'pgcrypto' },
  cube: { pglite: 'cube' },
  earthdistance: { pglite: 'earthdistance' },
  btree_gist: { pglite: 'btree_gist' },
  btree_gin: { pglite: 'btree_gin' },
  fuzzystrmatch: { pglite: 'fuzzystrmatch' },
  intarray: { pglite: 'intarray' },
  isn: { pglite: 'isn' },
  seg: { pglite: 'seg' },
  unaccent: { pglite: 'unaccent' },
  vector: { pglite: 'vector' },
} as const satisfies Record<string, { pglite: string }>;

export type SandboxExtension = keyof typeof SANDBOX_EXTENSIONS;

const ORDER = Object.keys(SANDBOX_EXTENSIONS) as SandboxExtension[];

/** Whether a sandbox may create the extension `name`. */
export const isSandboxExtension = (name: string): name is SandboxExtension => Object.hasOwn(SANDBOX_EXTENSIONS, name);

/** The extensions a snapshot's database had that a sandbox may create, in creation order. */
export function wantedExtensions(
  snapshot: Pick<DbSnapshot, 'extensions'>,
): Array<{ name: SandboxExtension; schema: string }> {
  const recorded = new Map((snapshot.extensions ?? []).map((e) => [e.name, e.schema]));
  return ORDER.filter((name) => recorded.has(name)).map((name) => ({ name, schema: recorded.get(name) as string }));
}

/**
 * A PGlite extension module, as PGlite's `Extension` is: kept structural here, so the package's
 * types never load PGlite's (which need Emscripten's); PGlite.create's callers cast it.
 */
export interface PgliteExtension {
  name: string;
  setup: (...args: never[]) => Promise<unknown>;
}

/**
 * The PGlite modules of the extensions `snapshot` names, for PGlite.create's `extensions` option.
 * An extension whose module is not installed (vector without @electric-sql/pglite-pgvector) is
 * left out: creating it then fails, and the sandbox says what it lacks.
 * @example PGlite.create({ extensions: await pgliteExtensions(recording.pre.db) })
 */
export async function pgliteExtensions(
  snapshot: Pick<DbSnapshot, 'extensions'>,
): Promise<Record<string, PgliteExtension>> {
  const out: Record<string, PgliteExtension> = {};
  for (const { name } of wantedExtensions(snapshot)) {
    const module = SANDBOX_EXTENSIONS[name].pglite;
    const specifier = name === 'vector' ? '@electric-sql/pglite-pgvector' : `@electric-sql/pglite/contrib/${module}`;
    try {
      const loaded = (await import(specifier)) as Record<string, PgliteExtension | undefined>;
      const extension = loaded[module];
      if (extension !== undefined) out[module] = extension;
    } catch {
      // Not installed here: the sandbox is built without it.
    }
  }
  return out;
}

/**
 * Creates the extensions `snapshot` names that a sandbox may create, each in its recorded schema,
 * each in a savepoint (one that cannot be created, or that this role may not create, leaves the
 * rest standing), and returns the names of those the database now holds. Runs inside a transaction.
 */
export async function createExtensions(db: Queryable, snapshot: Pick<DbSnapshot, 'extensions'>): Promise<Set<string>> {
  for (const { name, schema } of wantedExtensions(snapshot)) {
    await db.query('SAVEPOINT tapedeck_extension');
    try {
      await db.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      await db.query(`CREATE EXTENSION IF NOT EXISTS ${quoteIdent(name)} WITH SCHEMA ${quoteIdent(schema)}`);
      await db.query('RELEASE SAVEPOINT tapedeck_extension');
    } catch {
      await db.query('ROLLBACK TO SAVEPOINT tapedeck_extension');
    }
  }
  const { rows } = await db.query('SELECT extname::text AS name FROM pg_extension');
  return new Set((rows as Array<{ name: string }>).map((r) => r.name));
}

/** Why the sandbox lacks an extension the recorded database had, for the replay's warning. */
export function missingExtensionReason(name: string): string {
  return isSandboxExtension(name)
    ? 'it cannot be created here'
    : 'not one a sandbox creates: an extension is code, and only a known list is installed';
}
