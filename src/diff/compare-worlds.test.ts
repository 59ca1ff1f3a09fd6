import { describe, expect, it } from 'vitest';
import type { DbSnapshot, Row } from '../recording/index.js';
import { compareWorlds } from './compare-worlds.js';

const sha = (c: string) => c.repeat(64);

function db(rows: Row[], extraTable = false): DbSnapshot {
  const table = (name: string, tableRows: Row[]) => ({
    schema: 'public',
    name,
    columns: [
      { name: 'id', type: 'int4', nullable: false },
      { name: 'seats', type: 'int4', nullable: false },
    ],
    primaryKey: ['id'],
    rows: tableRows,
  });
  return {
    schemas: ['public'],
    ddl: [],
    tables: [table('bookings', rows), ...(extraTable ? [table('audit', [])] : [])],
  };
}

describe('compareWorlds', () => {
  it('is empty for equal worlds, whatever the row order', () => {
    const fs = { files: { 'a.txt': { mode: 0o644, size: 1, sha256: sha('a') } } };
    const rows = [
      { id: 1, seats: 1 },
      { id: 2, seats: 2 },
    ];
    expect(compareWorlds({ fs, db: db(rows) }, { fs, db: db([...rows].reverse()) }).differences).toEqual([]);
  });

  it('names each differing file and row, and a table only one world has', () => {
    const expected = {
      fs: {
        files: {
          'same.txt': { mode: 0o644, size: 1, sha256: sha('a') },
          'changed.txt': { mode: 0o644, size: 1, sha256: sha('b') },
          'gone.txt': { mode: 0o644, size: 1, sha256: sha('c') },
        },
      },
      db: db([
        { id: 1, seats: 1 },
        { id: 2, seats: 2 },
      ]),
    };
    const actual = {
      fs: {
        files: {
          // A mode alone is no difference: the recorder and the replay capture modes differently.
          'same.txt': { mode: 0o600, size: 1, sha256: sha('a') },
          'changed.txt': { mode: 0o644, size: 1, sha256: sha('d') },
          'new.txt': { mode: 0o644, size: 1, sha256: sha('e') },
        },
      },
      db: db(
        [
          { id: 1, seats: 5 },
          { id: 3, seats: 3 },
        ],
        true,
      ),
    };
    expect(compareWorlds(expected, actual).differences).toEqual([
      'fs changed.txt: content differs',
      "fs gone.txt: missing from the replay's world",
      'fs new.txt: not in the recorded world',
      "db public.audit: table only in the replay's world",
      'db public.bookings: row {"id":1} differs in seats (recorded {"id":1,"seats":1}, replay {"id":1,"seats":5})',
      'db public.bookings: missing row {"id":2,"seats":2}',
      'db public.bookings: unexpected row {"id":3,"seats":3}',
    ]);
  });

  it('does not compare a database with one that was not captured', () => {
    expect(compareWorlds({ db: db([{ id: 1, seats: 1 }]) }, {})).toEqual({ differences: [], serverClock: [] });
  });

  it('shows a row that differs only where the server filled in its clock (DEFAULT now()), as no difference', () => {
    const notes = (rows: Row[]): DbSnapshot => ({
      schemas: ['app'],
      ddl: [],
      tables: [
        {
          schema: 'app',
          name: 'notes',
          columns: [
            { name: 'id', type: 'integer', nullable: false },
            { name: 'body', type: 'text', nullable: false },
            {
              name: 'created_at',
              type: 'timestamp with time zone',
              nullable: false,
              default: { kind: 'function', name: 'now' },
            },
            { name: 'due', type: 'date', nullable: true, default: { kind: 'function', name: 'current_date' } },
            { name: 'token', type: 'uuid', nullable: true, default: { kind: 'function', name: 'gen_random_uuid' } },
          ],
          primaryKey: ['id'],
          rows,
        },
      ],
    });
    const row = { id: 1, body: 'rain', created_at: '2026-01-01T00:00:00.000001Z', due: '2026-01-01', token: null };
    const replayed = { ...row, created_at: '2026-11-29T16:00:00.000000Z', due: '2026-11-29' };
    expect(compareWorlds({ db: notes([row]) }, { db: notes([replayed]) })).toEqual({
      differences: [],
      serverClock: [
        'db app.notes: row {"id":1} differs in created_at, due (recorded {"body":"rain","created_at":"2026-01-01T00:00:00.000001Z","due":"2026-01-01","id":1,"token":null}, replay {"body":"rain","created_at":"2026-11-29T16:00:00.000000Z","due":"2026-11-29","id":1,"token":null})',
      ],
    });
    // Any other column differing too, or a default that is no clock (gen_random_uuid), is a difference.
    const { differences } = compareWorlds(
      { db: notes([row]) },
      {
        db: notes([
          { ...replayed, body: 'snow' },
          { ...row, id: 2, token: 'x' },
        ]),
      },
    );
    expect(differences).toEqual([
      expect.stringMatching(/^db app\.notes: row \{"id":1\} differs in body, created_at, due /),
      expect.stringMatching(/^db app\.notes: unexpected row/),
    ]);
    const uuid = compareWorlds({ db: notes([row]) }, { db: notes([{ ...row, token: 'y' }]) });
    expect(uuid.differences).toHaveLength(1);
    expect(uuid.serverClock).toEqual([]);
  });
});
