// One run's observations in observed world capture: the first image of every row it touched (its
// pre-world), its committed changes in order, and what it did that observed capture cannot follow.
import type pg from 'pg';
import { canonicalJson, type DbChangedPayload, type Row } from '../../recording/index.js';
import type { CatalogTable } from './observed-catalog.js';

/** Limits of one run's observation (memory stays bounded whatever the run does). */
export interface ObservedLimits {
  /** Rows kept as images; past it, more rows are not observed and the recording says so. */
  maxRows?: number;
}

export interface Observation {
  /** The statement (in run order) that observed the row. */
  seq: number;
  /** The row, or null when it did not exist (first touched by an insert). */
  row: Row | null;
  /**
   * A write's before-image or a read's own row (exact as of its statement), or a keyed read made
   * after the statement.
   */
  source: 'before' | 'result' | 'read';
  /** For a read: the run's statement count when the keyed read came back. */
  readAt: number;
}

export interface TouchedTable {
  table: CatalogTable;
  images: Map<string, Observation>;
}

export interface DbIdentity {
  key: string;
  url: string;
  params: pg.ClientConfig;
}

/** One run's observations. Created by record(); fed by the pg patch; finished into snapshots. */
export class ObservedRun {
  private seq = 0;
  private rows = 0;
  private readonly touched = new Map<number, TouchedTable>();
  private readonly committed: DbChangedPayload[] = [];
  private readonly pending = new Set<Promise<void>>();
  /** Statements the run made that observed capture cannot follow, by kind (shown in the manifest). */
  readonly unobserved = new Map<string, number>();
  database: DbIdentity | undefined;

  constructor(
    /** Hands committed changes to the recording session (as a `database changes` step). */
    private readonly emit: (changes: DbChangedPayload[]) => void,
    private readonly limits: ObservedLimits = {},
  ) {}

  nextSeq(): number {
    return ++this.seq;
  }

  get statementCount(): number {
    return this.seq;
  }

  note(kind: string): void {
    this.unobserved.set(kind, (this.unobserved.get(kind) ?? 0) + 1);
  }

  /** Records the first image of a row (later images of the same row are ignored unless earlier). */
  observe(table: CatalogTable, row: Row | null, key: Row, observation: Omit<Observation, 'row'>): void {
    let touched = this.touched.get(table.oid);
    if (touched === undefined) {
      touched = { table, images: new Map() };
      this.touched.set(table.oid, touched);
    }
    const id = canonicalJson(key);
    const current = touched.images.get(id);
    if (current !== undefined && !prefer({ ...observation, row }, current)) return;
    if (current === undefined) {
      if (this.rows >= (this.limits.maxRows ?? 50_000)) {
        this.note('rows past the limit');
        return;
      }
      this.rows++;
    }
    touched.images.set(id, { ...observation, row });
  }

  /** Whether the run has an image of the row with this key (null: a row it inserted). */
  hasImage(table: CatalogTable, key: Row): boolean {
    return this.touched.get(table.oid)?.images.has(canonicalJson(key)) === true;
  }

  /** Changes of one committed transaction (or one statement outside a transaction), in order. */
  commit(changes: Array<{ table: CatalogTable; change: DbChangedPayload }>): void {
    if (changes.length === 0) return;
    for (const { table } of changes)
      if (!this.touched.has(table.oid)) this.touched.set(table.oid, { table, images: new Map() });
    const list = changes.map((c) => c.change);
    this.committed.push(...list);
    this.emit(list);
  }

  track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  touchedTables(): TouchedTable[] {
    return [...this.touched.values()];
  }

  get changes(): readonly DbChangedPayload[] {
    return this.committed;
  }
}

/**
 * Which of two observations of one row is its pre-run image: a write's before-image is exact as
 * of its statement; a keyed read is no earlier than when it came back, which may be after the
 * run's own write of the row — then the write's before-image is the earlier truth. A read that came
 * back once statement N was issued may hold N's effect (it ran on another connection, while N ran),
 * so it counts as after N: statement N's before-image, exact as of N, is the earlier of the two.
 * (Counted as at N, a parent table's re-read that came back as the run's next UPDATE was issued
 * outranked that UPDATE's before-image, and the run's pre-world held the updated rows: seen in CI.)
 */
function prefer(candidate: Observation, current: Observation): boolean {
  const valueAt = (o: Observation) => (o.source === 'read' ? o.readAt + 0.5 : o.seq);
  return valueAt(candidate) < valueAt(current);
}
