// A step-indexed view of a Recording: what happened at each step, the bodies as text, the world.
import type {
  Body,
  DbSnapshot,
  FsSnapshot,
  HttpExchangePayload,
  ModelCalledPayload,
  Recording,
  StateType,
  StepCompletedPayload,
  ToolCalledPayload,
} from '../recording/index.js';
import { bodyText, stepNames, TapedeckError, worldAt } from '../recording/index.js';

/** One step of a run, with the event that defines it. */
export interface StepView {
  step: number;
  stateType: StateType;
  /** The agent's tool for a step that carries out a decided call, else the recorded name. */
  name: string;
  /** The capture layer's name (`POST /refunds`) when the step is named after the agent's tool. */
  route?: string;
  parentStepId?: number;
  model?: ModelCalledPayload;
  tool?: ToolCalledPayload;
  /** The HTTP exchange of a tool step (its response is what the agent observed). */
  exchange?: HttpExchangePayload;
  status?: StepCompletedPayload['status'];
}

/** The world at a step: files and database rows. */
export interface World {
  fs: FsSnapshot;
  db?: DbSnapshot;
}

/** Every step of the recording, ordered by step number (steps count from 1). */
export function listSteps(recording: Recording): StepView[] {
  const byStep = new Map<number, StepView>();
  const exchanges = new Map<string, HttpExchangePayload>();
  for (const event of recording.events) {
    if (event.type === 'http.exchange') exchanges.set(event.payload.exchangeId, event.payload);
    if (event.stepId < 1) continue;
    let view = byStep.get(event.stepId);
    if (event.type === 'step.started') {
      view = { ...view, step: event.stepId, stateType: event.payload.stateType, name: event.payload.name };
      if (event.parentStepId !== undefined) view.parentStepId = event.parentStepId;
      byStep.set(event.stepId, view);
      continue;
    }
    if (!view) {
      view = { step: event.stepId, stateType: 'OBSERVE', name: event.type };
      byStep.set(event.stepId, view);
    }
    if (event.type === 'model.called') view.model = event.payload;
    else if (event.type === 'tool.called') {
      view.tool = event.payload;
      if (view.parentStepId === undefined && event.parentStepId !== undefined) view.parentStepId = event.parentStepId;
    } else if (event.type === 'step.completed') view.status = event.payload.status;
  }
  const names = stepNames(recording.events);
  for (const view of byStep.values()) {
    const named = names.get(view.step);
    if (named !== undefined) {
      view.name = named.name;
      if (named.route !== undefined) view.route = named.route;
    }
    const id = view.tool?.exchangeId;
    const exchange = id === undefined ? undefined : exchanges.get(id);
    if (exchange) view.exchange = exchange;
  }
  return [...byStep.values()].sort((a, b) => a.step - b.step);
}

/** The highest step number of the recording (0 when it has no steps). */
export function stepCount(recording: Recording): number {
  let max = 0;
  for (const event of recording.events) if (event.stepId > max) max = event.stepId;
  return max;
}

/** A body's text: inline text, decoded base64, or the blob's bytes. */
export function bodyToText(recording: Recording, body: Body | undefined): string {
  return bodyText(recording, body);
}

/** Throws a clear error for a step outside 1..N. */
export function assertStep(recording: Recording, step: number, what = 'step'): void {
  const n = stepCount(recording);
  if (!Number.isInteger(step) || step < 0 || step > n) {
    throw new TapedeckError(
      'BISECT_STEP_RANGE',
      n === 0
        ? `${what} ${step} is out of range: ${recording.dir} has no steps (only 0, before the first step)`
        : `${what} ${step} is out of range: ${recording.dir} has steps 1..${n} (0 = before the first step)`,
    );
  }
}

/** worldAt(recording, k) from the recording library, with the step checked against the run's range. */
export function worldAtStep(recording: Recording, step: number): World {
  assertStep(recording, step);
  return worldAt(recording, step);
}
