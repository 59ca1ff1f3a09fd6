// The events of a recording grouped by step, as the ledger reads them: each step's model and tool
// calls, validators, artifacts and compiled contexts, and its time (where its answers came from:
// stepServedFrom in src/recording/provenance.ts).
import { isTelemetry } from '../recording/telemetry.js';
import type {
  EventOf,
  HttpExchangePayload,
  ModelCalledPayload,
  Recording,
  StateType,
  ToolCalledPayload,
} from '../recording/types.js';

/** One step's events, by kind. */
export interface StepAcc {
  stepId: number;
  parentStepId: number | null;
  started?: EventOf<'step.started'>;
  completed?: EventOf<'step.completed'>;
  models: ModelCalledPayload[];
  tools: ToolCalledPayload[];
  validators: Record<string, unknown>[];
  artifacts: Record<string, unknown>[];
  compiled: Record<string, unknown>[];
  firstTime?: string;
  lastTime?: string;
}

export interface StepIndex {
  steps: Map<number, StepAcc>;
  /** The steps in step order. */
  ordered: StepAcc[];
  exchanges: Map<string, HttpExchangePayload>;
  runStart?: string;
  runEnd?: string;
}

/** Groups the events of a recording by step (run-level events, step 0, are left out). */
export function indexSteps(recording: Recording): StepIndex {
  const steps = new Map<number, StepAcc>();
  const exchanges = new Map<string, HttpExchangePayload>();
  let runStart: string | undefined;
  let runEnd: string | undefined;
  for (const event of recording.events) {
    if (event.type === 'http.exchange') exchanges.set(event.payload.exchangeId, event.payload);
    if (event.type === 'run.started') runStart ??= event.time;
    if (event.type === 'run.completed') runEnd = event.time;
    if (event.stepId === 0) continue;
    let acc = steps.get(event.stepId);
    if (!acc) {
      acc = {
        stepId: event.stepId,
        parentStepId: null,
        models: [],
        tools: [],
        validators: [],
        artifacts: [],
        compiled: [],
      };
      steps.set(event.stepId, acc);
    }
    if (event.parentStepId !== undefined && acc.parentStepId === null) acc.parentStepId = event.parentStepId;
    acc.firstTime ??= event.time;
    acc.lastTime = event.time;
    switch (event.type) {
      case 'step.started':
        acc.started = event;
        break;
      case 'step.completed':
        acc.completed = event;
        break;
      case 'model.called':
        acc.models.push(event.payload);
        break;
      case 'tool.called':
        acc.tools.push(event.payload);
        break;
      case 'validator.called':
        acc.validators.push(event.payload);
        break;
      case 'artifact.modified':
      case 'artifact.created':
        acc.artifacts.push(event.payload);
        break;
      case 'context.compiled':
        acc.compiled.push(event.payload);
        break;
      default:
        break;
    }
  }
  // The agent's telemetry (a tracer's exports) is not a tool it called: no tool event, no tool cost.
  for (const acc of steps.values()) {
    if (acc.tools.length === 0) continue;
    acc.tools = acc.tools.filter((tool) => {
      const exchange = tool.exchangeId === undefined ? undefined : exchanges.get(tool.exchangeId);
      return exchange === undefined || !isTelemetry(exchange.request);
    });
  }
  const ordered = [...steps.values()].sort((a, b) => a.stepId - b.stepId);
  return { steps, ordered, exchanges, ...(runStart ? { runStart } : {}), ...(runEnd ? { runEnd } : {}) };
}

/** A step's state type: as it started, else its tool's, else THINK for a model call, else OBSERVE. */
export function stateTypeOf(acc: StepAcc): StateType {
  return acc.started?.payload.stateType ?? acc.tools[0]?.stateType ?? (acc.models.length > 0 ? 'THINK' : 'OBSERVE');
}

export function sumLatency(acc: StepAcc): number | null {
  const latencies = [...acc.models.map((m) => m.latencyMs), ...acc.tools.map((t) => t.latencyMs)];
  return latencies.length === 0 ? null : latencies.reduce((a, b) => a + b, 0);
}
