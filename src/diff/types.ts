// Types of the state-diff engine: the changes between two worlds, and the seed's eval_state_result row.
import type { FileEntry, Row } from '../recording/index.js';

/** A step that caused a change (from the fs.changed / db.changed / tool.called events). */
export interface Attribution {
  /** The step the change belongs to (the last step that touched the object). */
  stepId: number | null;
  /** Every step that touched the object, in order. */
  steps: number[];
}

export interface FsChange extends Attribution {
  kind: 'file';
  path: string;
  op: 'create' | 'modify' | 'delete';
  before?: FileEntry;
  after?: FileEntry;
  /** True when either side is not valid utf8 text (compared by hash only). */
  binary: boolean;
  /** Unified diff (text files only; absent for binary files or unreadable blobs). */
  patch?: string;
  /** Lines added / removed in the unified diff. */
  added?: number;
  removed?: number;
}

export interface DbChange extends Attribution {
  kind: 'row';
  schema: string;
  table: string;
  op: 'insert' | 'update' | 'delete';
  /** Primary key columns -> values. */
  key: Row;
  before?: Row;
  after?: Row;
  /** Columns whose value differs (update), or every column (insert/delete). */
  changedColumns: string[];
  /**
   * An update whose every changed column has a default the server fills from its clock
   * (DEFAULT now(), current_timestamp, …): two runs of the same agent write different values there.
   */
  serverClock?: true;
}

export interface HttpEffect extends Attribution {
  kind: 'request';
  /** Effect number in the recording, from 1, in event order (reads are numbered apart, from 1). */
  index: number;
  /** The agent's tool the step carried out (else the tool.called name), or "http" for a bare exchange. */
  name: string;
  /** The capture layer's name (`POST /bookings`) when `name` is the agent's tool. */
  route?: string;
  method: string;
  /** URL for HTTP effects, tool name for in-process tools. */
  target: string;
  /** Parameters: parsed request body, URL query and tool arguments merged. */
  parameters: Record<string, unknown>;
  /** The raw tool arguments, when the effect came from tool.called. */
  args?: unknown;
  /** Response status (HTTP) when there was one. */
  status?: number;
  /** The result the agent observed, when known. */
  result?: unknown;
  error?: { code: string; message: string };
  /** True when the request was made (live or served from the recording); false when held back in a replay, or it got no response. */
  executed: boolean;
  /** The request only reads (never a side effect): listed for request expectations only. */
  read?: boolean;
  /**
   * A replay held it back: never sent (provenance `blocked`, src/recording/provenance.ts isHeldBack).
   * It shows what the agent tried; it satisfies no "it was made" expectation and is no execution.
   */
  heldBack: boolean;
  /** Sequence number of the event that produced it. */
  seq: number;
}

export type StateChange = FsChange | DbChange | HttpEffect;

export interface WorldChanges {
  files: FsChange[];
  rows: DbChange[];
  requests: HttpEffect[];
}

/** The seed's eval_state_result row (000 §12), one per state object. */
export interface EvalStateResult {
  evalId: string;
  traceId: string;
  stateObjectId: string;
  stateObjectType: 'file' | 'db_row' | 'http_request';
  stateObjectPath: string;
  /** create / modify / delete / submit / send / write */
  stateAction: 'create' | 'modify' | 'delete' | 'submit' | 'send' | 'write' | null;
  existsAfterRun: boolean;
  readableAfterRun: boolean;
  nonEmptyAfterRun: boolean;
  /** null when no expectation speaks about this object. */
  expectedStateMatch: boolean | null;
  sideEffectDetected: boolean;
  targetStateMatchScore: number;
  contentUsabilityScore: number;
  formatQualityScore: number;
  boundaryControlScore: number;
  stateChangeScore: number;
  failureReasonCodes: string[];
  diffSummary: Record<string, unknown>;
  /** The step that caused the change (not a seed column; kept for attribution). */
  stepId: number | null;
}

/** Weights of the seed's State Change Score (000 §11). */
export interface StateScoreWeights {
  targetStateMatch: number;
  contentUsability: number;
  formatQuality: number;
  boundaryControl: number;
}

export const DEFAULT_STATE_WEIGHTS: StateScoreWeights = {
  targetStateMatch: 0.4,
  contentUsability: 0.3,
  formatQuality: 0.2,
  boundaryControl: 0.1,
};
