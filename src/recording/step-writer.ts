// One step as the format writes it: step.started, the step's events, step.completed. The
// recorder (src/record/session.ts) and the replayer (src/replay/) both build their steps here,
// so a step looks the same whoever wrote it.

import type { StateType, ToolCalledPayload } from './types.js';
import type { AppendInput } from './writer.js';

/** An event inside a step: the step writer sets its stepId, parentStepId and (when missing) time. */
export type StepEvent = Omit<AppendInput, 'stepId' | 'parentStepId'>;

export interface StepRecord {
  stepId: number;
  parentStepId?: number | undefined;
  stateType: StateType;
  name: string;
  /** The decided tool call the step answers (the step is then named after the agent's tool). */
  toolCallId?: string | undefined;
  /** The capture layer's name (`POST /refunds`) when the step is named after the agent's tool. */
  route?: string | undefined;
  /** Epoch milliseconds: step.started carries `start`; the other events and step.completed carry `end`. */
  start: number;
  end: number;
  events: readonly StepEvent[];
  status: 'success' | 'error';
  errorType?: string | undefined;
}

/**
 * The events of one step, in the order they are appended.
 * @example for (const e of stepEvents({ stepId: 3, stateType: 'THINK', name: 'gpt-4o', start, end, events, status: 'success' })) writer.append(e);
 */
export function stepEvents(step: StepRecord): AppendInput[] {
  const ids = {
    stepId: step.stepId,
    ...(step.parentStepId === undefined ? {} : { parentStepId: step.parentStepId }),
  };
  const end = new Date(step.end).toISOString();
  return [
    {
      type: 'step.started',
      ...ids,
      time: new Date(step.start).toISOString(),
      payload: {
        stateType: step.stateType,
        name: step.name,
        ...(step.toolCallId === undefined ? {} : { toolCallId: step.toolCallId }),
        ...(step.route === undefined ? {} : { route: step.route }),
      },
    },
    ...step.events.map((event) => ({ time: end, ...event, ...ids }) as AppendInput),
    {
      type: 'step.completed',
      ...ids,
      time: end,
      payload: {
        status: step.status,
        latencyMs: Math.max(0, step.end - step.start),
        ...(step.errorType === undefined ? {} : { errorType: step.errorType }),
      },
    },
  ];
}

/**
 * A step of the agent's own tool call (a tool() call, a file read or write, a request over a
 * child's stdio), its step number and parent left to the writer: the recorder and the replayer
 * write such steps alike. `effects`: the world changes it made, after its tool call.
 */
export function agentToolStep(
  payload: ToolCalledPayload,
  at: { ts: number; end: number },
  effects: readonly StepEvent[],
): Omit<StepRecord, 'stepId' | 'parentStepId'> {
  return {
    stateType: payload.stateType,
    name: payload.name,
    start: at.ts,
    end: at.end,
    events: [{ type: 'tool.called', payload }, ...effects],
    status: payload.error === undefined ? 'success' : 'error',
    errorType: payload.error?.code,
  };
}
