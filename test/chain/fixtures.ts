// Small worlds for the answer-chain tests: a one-table database snapshot.
import type { DbSnapshot } from '../../src/recording/index.js';

/** Schema `app` with one table, `notes`, holding one row whose body is `note`. */
export function notesSnapshot(note: string): DbSnapshot {
  return {
    schemas: ['app'],
    ddl: ['CREATE TABLE app.notes (id text PRIMARY KEY, body text NOT NULL)'],
    tables: [
      {
        schema: 'app',
        name: 'notes',
        columns: [
          { name: 'id', type: 'text', nullable: false },
          { name: 'body', type: 'text', nullable: false },
        ],
        primaryKey: ['id'],
        rows: [{ id: 'n1', body: note }],
      },
    ],
  };
}
