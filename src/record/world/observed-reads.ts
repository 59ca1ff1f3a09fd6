// Keyed reads on tapedeck's own connections to a database, coalesced. While the connections are
// busy, reads of the same table by the same key columns wait together and go as one statement,
// and each caller gets back exactly the rows it asked for (the statement itself says which key
// position asked for which row, so no value is compared in JavaScript). Under a steady stream of
// sessions the observer then sends a few statements per round trip instead of one per read of
// every session: one-row reads queued one by one behind two connections held every recording's
// end back for seconds (the queue grew with the load), and cost a round trip each.
import type pg from 'pg';
import type { Row } from '../../recording/index.js';
import type { Catalog, CatalogTable } from './observed-catalog.js';

/**
 * Runs a sequence of statements on one connection of tapedeck's pool: it waits for the pool once,
 * not behind every run's keyed reads at each statement (the pool is never idle under a steady
 * stream of sessions).
 */
export async function onOneClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

/** Keys a statement carries at most: a batch past it is split. */
const MAX_BATCH_KEYS = 2000;

interface Waiting {
  /** Column-major: keys[c][i] is column c of the i-th key. */
  keys: unknown[][];
  resolve(rows: Row[]): void;
  reject(error: unknown): void;
}

interface Batch {
  id: string;
  catalog: Catalog;
  table: CatalogTable;
  columns: string[];
  waiting: Waiting[];
  size: number;
}

export class KeyedReads {
  private busy = 0;
  private readonly queue: Batch[] = [];

  constructor(
    private readonly pool: pg.Pool,
    /** Statements in flight at most (the pool's size). */
    private readonly connections: number,
  ) {}

  /**
   * The rows of `table` whose `columns` (a key) equal one of `keys` (column-major: one array per
   * column), each row once, as the catalog's JSON images.
   */
  read(catalog: Catalog, table: CatalogTable, columns: string[], keys: unknown[][]): Promise<Row[]> {
    const count = keys[0]?.length ?? 0;
    if (count === 0) return Promise.resolve([]);
    return new Promise<Row[]>((resolve, reject) => {
      const id = `${table.oid}\u0000${columns.join('\u0000')}`;
      let batch = this.queue.findLast((b) => b.id === id);
      if (batch === undefined || batch.catalog !== catalog || batch.size + count > MAX_BATCH_KEYS) {
        batch = { id, catalog, table, columns, waiting: [], size: 0 };
        this.queue.push(batch);
      }
      batch.waiting.push({ keys, resolve, reject });
      batch.size += count;
      this.pump();
    });
  }

  private pump(): void {
    while (this.busy < this.connections) {
      const batch = this.queue.shift();
      if (batch === undefined) return;
      this.busy++;
      void this.send(batch).finally(() => {
        this.busy--;
        this.pump();
      });
    }
  }

  private async send(batch: Batch): Promise<void> {
    const params = batch.columns.map((_, c) => batch.waiting.flatMap((w) => w.keys[c] ?? []));
    // owner[p] is the caller that asked for key position p (0-based).
    const owner: number[] = [];
    for (const [at, w] of batch.waiting.entries()) for (let i = 0; i < (w.keys[0]?.length ?? 0); i++) owner.push(at);
    let result: pg.QueryResult<{ r: Row; at: number[] }>;
    try {
      result = await this.pool.query(batch.catalog.keyedRead(batch.table, batch.columns, { positions: true }), params);
    } catch (error) {
      for (const w of batch.waiting) w.reject(error);
      return;
    }
    const rows: Row[][] = batch.waiting.map(() => []);
    for (const { r, at } of result.rows) {
      const to = new Set<number>();
      for (const p of at) {
        const o = owner[p - 1];
        if (o !== undefined) to.add(o);
      }
      for (const o of to) rows[o]?.push(r);
    }
    for (const [at, w] of batch.waiting.entries()) w.resolve(rows[at] ?? []);
  }
}
