// The agent's belief at step k: what it was told, what it observed, what it claimed and what it did.
import { recordingDay } from '../evaluate/trajectory.js';
import { EntityIndex, FactIndex, type RunDay } from '../facts/index.js';
import { type Turn, turnsOf, turnText } from '../providers/index.js';
import type { Recording, StateType, ToolCall } from '../recording/index.js';
import { canonicalJson, jsonOrText, toolActions } from '../recording/index.js';
import { bodyToText, listSteps, type StepView } from './view.js';

/** One action the agent took (a tool step). */
export interface BeliefAction {
  step: number;
  stateType: StateType;
  name: string;
  /** The capture layer's name (`POST /orders`) when `name` is the agent's tool. */
  route?: string;
  /** The first step of the agent action it is part of (toolActions): an MCP call and the request its server made for it are one. */
  action: number;
  args: unknown;
  /** The result the agent observed, as text. */
  result: string;
  mutating: boolean;
  /** True when the action finished without an error (no tool error, step success, HTTP status < 400). */
  completed: boolean;
  requestedBy?: number;
}

/** Text the agent saw, and where it came from. */
export interface Observation {
  step: number;
  source: 'input' | 'tool-result' | 'context';
  text: string;
}

/** What the agent said (model output text) at a step. */
export interface Claim {
  step: number;
  text: string;
}

/** A model step's decision: the tool calls it asked for (none for a final answer). */
export interface Decision {
  step: number;
  toolCalls: ToolCall[];
}

/** The agent's belief over the prefix of steps 1..step. */
export interface Belief {
  step: number;
  /** The task as given: the system prompt and the first user input. */
  given: string[];
  /** The user's own words among them (the first call's user messages): who the user is, what they ask. */
  task: string[];
  /** The latest context the model saw (messages of the last model call at or before `step`). */
  context?: { step: number; system?: string; messages: unknown[] };
  observations: Observation[];
  claims: Claim[];
  actions: BeliefAction[];
  decisions: Decision[];
  /** The day the run happened on, for relative dates in what it says and saw (evaluate's recordingDay). */
  day?: RunDay;
}

/** The belief at step k, built from the steps 1..k of the recording. */
export function beliefAt(recording: Recording, step: number, steps: StepView[] = listSteps(recording)): Belief {
  const belief: Belief = { step, given: [], task: [], observations: [], claims: [], actions: [], decisions: [] };
  let firstModel = true;
  let lastModelStep = 0;
  const actions = toolActions(recording.events);
  for (const view of steps) {
    if (view.step > step) break;
    if (view.model) {
      const model = view.model;
      // The conversation as the call's provider reads it (src/providers): every API's shapes alike.
      const turns = turnsOf(model);
      lastModelStep = view.step;
      if (firstModel) {
        firstModel = false;
        for (const turn of turns) {
          if (turn.role === 'system' || turn.role === 'user') belief.given.push(turnText(turn));
          if (turn.role === 'user') belief.task.push(userWords(turn));
        }
      }
      for (const turn of turns) {
        if (turn.role !== 'assistant')
          belief.observations.push({ step: view.step, source: 'context', text: turnText(turn) });
      }
      belief.context =
        model.system === undefined
          ? { step: view.step, messages: model.messages }
          : { step: view.step, system: model.system, messages: model.messages };
      if (model.output.text) belief.claims.push({ step: view.step, text: model.output.text });
      belief.decisions.push({ step: view.step, toolCalls: model.output.toolCalls });
    }
    if (view.tool) {
      const tool = view.tool;
      const result = toolResultText(recording, view);
      const status = view.exchange?.response?.status;
      const action: BeliefAction = {
        step: view.step,
        stateType: view.stateType,
        name: view.name,
        ...(view.route !== undefined && { route: view.route }),
        action: actions.get(view.step)?.first ?? view.step,
        args: jsonOrText(tool.args),
        result,
        mutating: tool.mutating,
        completed:
          tool.error === undefined &&
          view.exchange?.error === undefined &&
          (view.status === undefined || view.status === 'success') &&
          (status === undefined || status < 400),
      };
      if (view.parentStepId !== undefined) action.requestedBy = view.parentStepId;
      belief.actions.push(action);
      if (result) belief.observations.push({ step: view.step, source: 'tool-result', text: result });
    }
  }
  // The run's final answer, when the recorder put it on run.completed only, is the last model step's claim.
  const finalOutput = recording.events.find((e) => e.type === 'run.completed');
  if (finalOutput?.type === 'run.completed' && finalOutput.payload.finalOutput && lastModelStep > 0) {
    const last = steps.filter((s) => s.model).at(-1);
    if (last && last.step <= step && !belief.claims.some((c) => c.text === finalOutput.payload.finalOutput)) {
      belief.claims.push({ step: last.step, text: finalOutput.payload.finalOutput });
    }
  }
  for (const text of belief.given) belief.observations.unshift({ step: 0, source: 'input', text });
  const day = recordingDay(recording, [...belief.given, ...belief.claims.map((c) => c.text)]);
  if (day !== undefined) belief.day = day;
  return belief;
}

function toolResultText(recording: Recording, view: StepView): string {
  const tool = view.tool;
  if (!tool) return '';
  const parts: string[] = [];
  if (tool.result !== undefined) parts.push(typeof tool.result === 'string' ? tool.result : canonicalJson(tool.result));
  if (tool.resultBody) parts.push(bodyToText(recording, tool.resultBody));
  if (tool.error) parts.push(`${tool.error.code}: ${tool.error.message}`);
  if (parts.length === 0 && view.exchange?.response) parts.push(bodyToText(recording, view.exchange.response.body));
  return parts.join('\n');
}

/** What the user wrote in a turn: its text parts (tool results handed back in a user turn are not their words). */
function userWords(turn: Turn): string {
  return turn.parts.flatMap((p) => (p.kind === 'text' ? [p.text] : [])).join('\n');
}

const beliefFacts = new WeakMap<Belief, FactIndex>();
const beliefEntities = new WeakMap<Belief, EntityIndex>();

/** The entities (objects with an id) the belief's observations show, positioned as in factsOfBelief. */
export function entitiesOfBelief(belief: Belief): EntityIndex {
  let index = beliefEntities.get(belief);
  if (index === undefined) {
    index = new EntityIndex();
    for (const o of belief.observations) {
      const label = o.source === 'input' ? 'the task' : `step ${o.step}`;
      index.add(o.text, { pos: 2 * o.step + (o.source === 'context' ? 0 : 1), stepId: o.step, label });
    }
    beliefEntities.set(belief, index);
  }
  return index;
}

/**
 * The facts of a belief's observations, indexed once. Positions order what was seen: an
 * observation of step s is at 2s+1 (a tool result, seen by the steps after it) or 2s (the
 * context of the model call at s, which that call's own decisions may use). Query with
 * `seenBy(step, ownContext)`.
 */
export function factsOfBelief(belief: Belief): FactIndex {
  let index = beliefFacts.get(belief);
  if (index === undefined) {
    index = new FactIndex(belief.day === undefined ? {} : { day: belief.day });
    for (const o of belief.observations) {
      const label = o.source === 'input' ? 'the task' : `step ${o.step} (${o.source})`;
      index.add(o.text, { pos: 2 * o.step + (o.source === 'context' ? 0 : 1), stepId: o.step, label });
    }
    beliefFacts.set(belief, index);
  }
  return index;
}

/** The bound of what a use at `step` has seen: before it, plus its own call's context for a model decision. */
export function seenBy(step: number, ownContext: boolean): number {
  return ownContext ? 2 * step : 2 * step - 1;
}
