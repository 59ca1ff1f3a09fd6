// TypeScript types of the Recording contract, inferred from the zod schemas in schema.ts.
import type * as z from 'zod';
import type * as S from './schema.js';

export type StateType = z.infer<typeof S.StateTypeSchema>;
export type EventType = z.infer<typeof S.EventTypeSchema>;
export type Body = z.infer<typeof S.BodySchema>;
export type StreamChunk = z.infer<typeof S.StreamChunkSchema>;
export type HttpExchangePayload = z.infer<typeof S.HttpExchangePayloadSchema>;
export type WebSocketExchangePayload = z.infer<typeof S.WebSocketExchangePayloadSchema>;
export type WebSocketMessage = z.infer<typeof S.WebSocketMessageSchema>;
export type DrawnAtHead = z.infer<typeof S.DrawnAtHeadSchema>;
export type Usage = z.infer<typeof S.UsageSchema>;
/** The token buckets of a Usage (the counts that add up; not its cacheWrite1h subset or serverTools). */
export type UsageBucket = 'inputUncached' | 'cacheRead' | 'cacheWrite' | 'output' | 'reasoning';
export type ToolCall = z.infer<typeof S.ToolCallSchema>;
export type ModelCalledPayload = z.infer<typeof S.ModelCalledPayloadSchema>;
export type ToolCalledPayload = z.infer<typeof S.ToolCalledPayloadSchema>;
export type FileEntry = z.infer<typeof S.FileEntrySchema>;
export type FsChangedPayload = z.infer<typeof S.FsChangedPayloadSchema>;
export type Row = z.infer<typeof S.RowSchema>;
export type DbChangedPayload = z.infer<typeof S.DbChangedPayloadSchema>;
export type NondeterminismPayload = z.infer<typeof S.NondeterminismPayloadSchema>;
export type StepStartedPayload = z.infer<typeof S.StepStartedPayloadSchema>;
export type StepCompletedPayload = z.infer<typeof S.StepCompletedPayloadSchema>;
export type RunStartedPayload = z.infer<typeof S.RunStartedPayloadSchema>;
export type RunCompletedPayload = z.infer<typeof S.RunCompletedPayloadSchema>;
/** How a server run's answer went: run.completed's `response`. */
export type RunResponse = z.infer<typeof S.RunResponseSchema>;
export type DivergencePayload = z.infer<typeof S.DivergencePayloadSchema>;
export type UnrecordedConnection = z.infer<typeof S.UnrecordedConnectionSchema>;
export type UnhookedPython = z.infer<typeof S.UnhookedPythonSchema>;
export type UnwatchedProgram = z.infer<typeof S.UnwatchedProgramSchema>;
export type CutEvent = z.infer<typeof S.CutEventSchema>;
export type PriceEntry = z.infer<typeof S.PriceEntrySchema>;
export type PriceSnapshot = z.infer<typeof S.PriceSnapshotSchema>;
export type Manifest = z.infer<typeof S.ManifestSchema>;
export type Stopped = z.infer<typeof S.StoppedSchema>;
/** The answer chain a replay's manifest names (manifest.replay.chain). */
export type ReplayChainSettings = z.infer<typeof S.ReplayChainSchema>;
export type FsSnapshot = z.infer<typeof S.FsSnapshotSchema>;
export type DbTable = z.infer<typeof S.DbTableSchema>;
export type PartitionBound = z.infer<typeof S.PartitionBoundSchema>;
export type DbColumn = z.infer<typeof S.DbColumnSchema>;
export type PgObjectRef = z.infer<typeof S.PgObjectRefSchema>;
export type ColumnDefault = z.infer<typeof S.ColumnDefaultSchema>;
export type DbSequence = z.infer<typeof S.DbSequenceSchema>;
export type DbSnapshot = z.infer<typeof S.DbSnapshotSchema>;

/** Payload type of each event type. */
export interface PayloadMap {
  'run.started': RunStartedPayload;
  'step.started': StepStartedPayload;
  'model.called': ModelCalledPayload;
  'tool.called': ToolCalledPayload;
  'http.exchange': HttpExchangePayload;
  'websocket.exchange': WebSocketExchangePayload;
  'context.compiled': Record<string, unknown>;
  'fs.changed': FsChangedPayload;
  'db.changed': DbChangedPayload;
  'artifact.created': Record<string, unknown>;
  'artifact.modified': Record<string, unknown>;
  'state.changed': Record<string, unknown>;
  nondeterminism: NondeterminismPayload;
  'validator.called': Record<string, unknown>;
  divergence: DivergencePayload;
  'step.completed': StepCompletedPayload;
  'run.completed': RunCompletedPayload;
}

/** One event of a recording, discriminated by `type`. */
export type RecordingEvent = {
  [K in EventType]: {
    seq: number;
    traceId: string;
    stepId: number;
    parentStepId?: number;
    type: K;
    time: string;
    payload: PayloadMap[K];
  };
}[EventType];

export type EventOf<K extends EventType> = Extract<RecordingEvent, { type: K }>;

/** A recording loaded in memory: what every engine takes. Blob bytes are fetched on demand. */
export interface Recording {
  dir: string;
  manifest: Manifest;
  events: RecordingEvent[];
  pre: { fs?: FsSnapshot; db?: DbSnapshot };
  post: { fs?: FsSnapshot; db?: DbSnapshot };
  /** Reads a blob's bytes by sha256 (verified); a file's bytes kept inline in its entry too (fileBytes reads either without a lookup). */
  readBlob(sha256: string): Buffer;
  /** Warnings from reading (e.g. a partial last line of an incomplete recording). */
  warnings: string[];
}
