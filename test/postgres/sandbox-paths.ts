// The paths a snapshot becomes a sandbox database by, for tests that hold each to the same
// checks: PGlite in-process (bisect --sql), PGlite behind pglite-socket (the default replay
// sandbox) and a real server (template sandbox, when TAPEDECK_PG_URL names one).
import { type Extensions, PGlite } from '@electric-sql/pglite';
import { type DbSandbox, openDbSandbox } from '../../sandbox/index.js';
import { applyRowChanges, pgliteExtensions, seedDatabase, snapshotDatabase } from '../../src/postgres/index.js';
import type { DbChangedPayload, DbSnapshot, Row } from '../../src/recording/index.js';

export interface SeededDatabase {
  query(sql: string): Promise<Row[]>;
  /** What the sandbox lacks of the recorded database (DbSandbox.lacks). */
  lacks: readonly string[];
  apply(changes: DbChangedPayload[]): Promise<void>;
  read(): Promise<DbSnapshot>;
  close(): Promise<void>;
}

export interface SandboxPath {
  name: string;
  /** No server to make it on (TAPEDECK_PG_URL unset). */
  skip?: boolean;
  open(snapshot: DbSnapshot): Promise<SeededDatabase>;
}

/** The three paths, each reading back `schemas`. */
export function sandboxPaths(schemas: string[]): SandboxPath[] {
  const url = process.env.TAPEDECK_PG_URL;
  const fromSandbox = (db: DbSandbox): SeededDatabase => ({
    query: (sql) => db.query(sql),
    lacks: db.lacks,
    apply: (changes) => db.apply(changes),
    read: () => db.snapshot(schemas),
    close: () => db.close(),
  });
  return [
    {
      name: 'PGlite in-process',
      async open(snapshot) {
        const db = await PGlite.create({ extensions: (await pgliteExtensions(snapshot)) as Extensions });
        const { lacks } = await seedDatabase(db, snapshot);
        return {
          lacks,
          query: async (sql) => (await db.query<Row>(sql)).rows,
          apply: (changes) => applyRowChanges(db, changes, snapshot),
          read: async () => (await snapshotDatabase(db, schemas)).snapshot,
          close: () => db.close(),
        };
      },
    },
    { name: 'PGlite over pglite-socket', open: async (s) => fromSandbox(await openDbSandbox(s, { kind: 'pglite' })) },
    {
      name: 'a server (template sandbox)',
      skip: !url,
      open: async (s) => fromSandbox(await openDbSandbox(s, { kind: 'template', url: url as string })),
    },
  ];
}
