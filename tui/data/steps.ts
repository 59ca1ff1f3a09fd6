// Turns a Recording's event stream into what the run view shows: one row per step for the
// timeline, and the full detail of one step (input, output, observation, world changes).

import { promptSimilarity, SAME_AGENT, turnsOf } from '../../src/providers/index.js';
import type {
  DbChangedPayload,
  DivergencePayload,
  FsChangedPayload,
  ModelCalledPayload,
  Recording,
  RecordingEvent,
  ServedFrom,
  StateType,
  ToolCalledPayload,
} from '../../src/recording/index.js';
import { exchangesServed, stepNames, stepServedFrom } from '../../src/recording/index.js';

export type StepStatus = 'success' | 'error' | 'timeout' | 'cancelled' | 'running';

/** One line of the timeline. */
export interface StepRow {
  stepId: number;
  parentStepId?: number;
  stateType: StateType | 'STEP';
  /** The agent's tool a step carries out (else the recorded name), or the model for a model call. */
  name: string;
  /** The capture layer's name (`POST /refunds`) when the step is named after the agent's tool. */
  route?: string;
  kind: 'model' | 'tool' | 'other';
  /** Provider-reported tokens: input (all buckets) + output. */
  tokens?: number;
  latencyMs?: number;
  status: StepStatus;
  errorType?: string;
  /** Replay divergences attributed to this step. */
  divergences: number;
  fsChanges: number;
  dbChanges: number;
  /** In a replay: where the step was served from (stepServedFrom). */
  servedFrom?: ServedFrom;
}

export interface StepIndex {
  rows: StepRow[];
  /** Position in `rows` of each stepId. */
  positionOf: Map<number, number>;
  /** Events of each step (stepId 0 holds run-level events). */
  eventsOf: Map<number, RecordingEvent[]>;
}

/** Builds the timeline of a recording in one pass over its events. */
export function indexSteps(recording: Recording): StepIndex {
  const names = stepNames(recording.events);
  const eventsOf = new Map<number, RecordingEvent[]>();
  for (const event of recording.events) {
    let list = eventsOf.get(event.stepId);
    if (!list) {
      list = [];
      eventsOf.set(event.stepId, list);
    }
    list.push(event);
  }
  const ids = [...eventsOf.keys()].filter((id) => id > 0).sort((a, b) => a - b);
  const rows: StepRow[] = [];
  const positionOf = new Map<number, number>();
  const servedOf = recording.manifest.replayOf === undefined ? undefined : exchangesServed(recording.events);
  for (const stepId of ids) {
    const events = eventsOf.get(stepId) ?? [];
    const row = rowOf(stepId, events);
    const from = servedOf && stepServedFrom(events, servedOf);
    if (from) row.servedFrom = from;
    const named = names.get(stepId);
    if (named !== undefined && row.kind !== 'model') {
      row.name = named.name;
      if (named.route !== undefined) row.route = named.route;
    }
    positionOf.set(stepId, rows.length);
    rows.push(row);
  }
  return { rows, positionOf, eventsOf };
}

function rowOf(stepId: number, events: RecordingEvent[]): StepRow {
  const row: StepRow = {
    stepId,
    stateType: 'STEP',
    name: '',
    kind: 'other',
    status: 'running',
    divergences: 0,
    fsChanges: 0,
    dbChanges: 0,
  };
  for (const event of events) {
    if (event.parentStepId !== undefined && row.parentStepId === undefined) row.parentStepId = event.parentStepId;
    switch (event.type) {
      case 'step.started':
        row.stateType = event.payload.stateType;
        if (!row.name) row.name = event.payload.name;
        break;
      case 'model.called': {
        row.kind = 'model';
        row.name = event.payload.model;
        const u = event.payload.usage;
        if (u) row.tokens = (row.tokens ?? 0) + u.inputUncached + u.cacheRead + u.cacheWrite + u.output;
        row.latencyMs ??= event.payload.latencyMs;
        break;
      }
      case 'tool.called':
        row.kind = 'tool';
        row.name = event.payload.name;
        if (row.stateType === 'STEP') row.stateType = event.payload.stateType;
        row.latencyMs ??= event.payload.latencyMs;
        if (event.payload.error) {
          row.status = 'error';
          row.errorType = event.payload.error.code;
        }
        break;
      case 'fs.changed':
        row.fsChanges++;
        break;
      case 'db.changed':
        row.dbChanges++;
        break;
      case 'divergence':
        row.divergences++;
        break;
      case 'step.completed':
        if (row.status !== 'error' || event.payload.status !== 'success') row.status = event.payload.status;
        if (event.payload.errorType) row.errorType = event.payload.errorType;
        row.latencyMs = event.payload.latencyMs;
        break;
      default:
        break;
    }
  }
  return row;
}

/** Everything the detail pane shows about one step. */
export interface StepDetail {
  row: StepRow;
  model?: ModelCalledPayload;
  tool?: ToolCalledPayload;
  fs: FsChangedPayload[];
  db: DbChangedPayload[];
  divergences: DivergencePayload[];
  /** Result text the agent observed (tool result, or the http response body when small). */
  observation?: string;
}

export function stepDetail(recording: Recording, index: StepIndex, stepId: number): StepDetail | undefined {
  const pos = index.positionOf.get(stepId);
  if (pos === undefined) return undefined;
  const row = index.rows[pos];
  if (!row) return undefined;
  const detail: StepDetail = { row, fs: [], db: [], divergences: [] };
  for (const event of index.eventsOf.get(stepId) ?? []) {
    if (event.type === 'model.called') detail.model = event.payload;
    else if (event.type === 'tool.called') detail.tool = event.payload;
    else if (event.type === 'fs.changed') detail.fs.push(event.payload);
    else if (event.type === 'db.changed') detail.db.push(event.payload);
    else if (event.type === 'divergence') detail.divergences.push(event.payload);
  }
  if (detail.tool) detail.observation = observationOf(recording, detail.tool);
  return detail;
}

function observationOf(recording: Recording, tool: ToolCalledPayload): string | undefined {
  if (tool.error) return `error ${tool.error.code}: ${tool.error.message}`;
  if (tool.result !== undefined) return typeof tool.result === 'string' ? tool.result : pretty(tool.result);
  const body = tool.resultBody;
  if (!body) return undefined;
  if (body.text !== undefined) return body.text;
  if (body.blob) {
    try {
      return recording.readBlob(body.blob).toString('utf8');
    } catch (error) {
      return `(blob ${body.blob.slice(0, 12)} unreadable: ${(error as Error).message})`;
    }
  }
  return `(${body.size} bytes, binary)`;
}

function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, null, 1) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A provider-shaped message reduced to a role and its text. */
export interface MessageText {
  role: string;
  text: string;
  /** Where this message's tokens come from, in the seed's context provenance terms. */
  source: 'system' | 'user' | 'history' | 'tool' | 'other';
}

/** A model call's conversation as role + text lines, from its provider's turns (src/providers). */
export function messageTexts(model: ModelCalledPayload): MessageText[] {
  const out: MessageText[] = [];
  let seenUser = false;
  for (const turn of turnsOf(model)) {
    for (const part of turn.parts) {
      if (part.kind === 'media') continue;
      const text = part.kind === 'tool-call' ? `→ ${part.name}(${part.arguments})` : part.text;
      let source: MessageText['source'];
      if (turn.role === 'system') source = 'system';
      else if (turn.role === 'tool' || part.kind === 'tool-result') source = 'tool';
      else if (turn.role === 'user' && !seenUser) source = 'user';
      else if (turn.role === 'other') source = 'other';
      else source = 'history';
      out.push({ role: turn.role, text, source });
    }
    if (turn.role === 'user') seenUser = true;
  }
  return out;
}

/** A system prompt the run's model calls carried: its text and the step of a call that carried it. */
export interface AgentPrompt {
  text: string;
  stepId: number;
  /** How many agents' prompts the run holds (prompts not alike: promptSimilarity); 1 for a run of one agent. */
  agents: number;
}

/**
 * The prompt a changed-prompt replay edits: that of the agent at `stepId` (the model call there,
 * else the last one before it with a system prompt), else the run's own (the first model call
 * that has one; a call inside a tool may come first, with none).
 */
export function agentPromptAt(recording: Recording, stepId?: number): AgentPrompt | undefined {
  const prompts: Array<{ text: string; stepId: number }> = [];
  for (const event of recording.events) {
    if (event.type !== 'model.called') continue;
    const system = messageTexts(event.payload).filter((m) => m.source === 'system');
    if (system.length > 0) prompts.push({ text: system.map((m) => m.text).join('\n\n'), stepId: event.stepId });
  }
  const at = stepId === undefined ? undefined : prompts.filter((p) => p.stepId <= stepId).at(-1);
  const chosen = at ?? prompts[0];
  if (chosen === undefined) return undefined;
  const distinct = [...new Set(prompts.map((p) => p.text))];
  const agents: string[] = [];
  for (const text of distinct) if (!agents.some((a) => promptSimilarity(a, text) >= SAME_AGENT)) agents.push(text);
  return { ...chosen, agents: agents.length };
}
