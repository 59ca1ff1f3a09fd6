// The trajectory of a run as the validators see it: model calls with their tool calls, tool steps with the
// results the agent observed, the final answer, what the user said, and the tokens and cost spent.
import { bodyText, toolCallFailure } from '../diff/index.js';
import { EntityIndex, FactIndex, looksMutating, type RunDay, runDayOf, usedValues } from '../facts/index.js';
import { modelCallCost, recordingPrices } from '../ledger/index.js';
import { toolsOf, turnsOf } from '../providers/index.js';
import {
  type HttpExchangePayload,
  isTelemetry,
  jsonOrText,
  linkToolSteps,
  type ModelCalledPayload,
  type Recording,
  type StateType,
  type ToolAction,
  toolActions,
  type Usage,
} from '../recording/index.js';

export interface RequestedCall {
  id: string;
  name: string;
  /** Parsed arguments; the raw text when they are not JSON. */
  args: unknown;
  argsValid: boolean;
}

export interface ModelStep {
  stepId: number;
  seq: number;
  model: string;
  text?: string;
  toolCalls: RequestedCall[];
  /** Names of the tools the model was offered. */
  offeredTools: string[];
  /** Required argument names per offered tool (from its JSON schema). */
  requiredArgs: Map<string, string[]>;
  usage?: Usage;
}

export interface ToolStep {
  stepId: number;
  parentStepId?: number;
  seq: number;
  /** The agent's tool when the step carries out a decided call, else the capture layer's name. */
  name: string;
  /** The capture layer's name (`POST /refunds`) when the step is named after the agent's tool. */
  route?: string;
  stateType: StateType;
  args: unknown;
  result: unknown;
  resultText: string;
  error?: { code: string; message: string };
  status?: number;
  mutating: boolean;
}

/** A tool call as the agent made it: the model's request, the step that ran it, the result it got back. */
export interface AgentCall {
  id: string;
  name: string;
  args: unknown;
  argsValid: boolean;
  /** The THINK step that requested it. */
  thinkStepId: number;
  /** The tool step that ran it (the THINK step when no tool step was recorded for it). */
  stepId: number;
  seq: number;
  resultText?: string;
  /** The result recorded by the tool step itself (may hold more than the model was shown). */
  stepResultText?: string;
  /** The tool step's error or HTTP status, when known. */
  error?: { code: string; message: string };
  status?: number;
  /** Whether the call changed the world: its step was mutating (a call no tool step shows: judged by its name). */
  mutating: boolean;
}

export interface Trajectory {
  modelSteps: ModelStep[];
  /** Every tool call the model requested, in order. */
  calls: AgentCall[];
  toolSteps: ToolStep[];
  /** Number of steps (step.started events). */
  stepCount: number;
  finalAnswer?: string;
  /** The user's words: the contract input and every user message the model saw. */
  userText: string;
  systemText: string;
  /** Observations: tool results and tool messages, with the seq at which each became visible. */
  observations: Array<{ seq: number; stepId: number; text: string }>;
  totalTokens: number;
  /** Model cost as the ledger prices it (src/ledger: the manifest's prices, else the bundled table). */
  cost: number;
  /**
   * The day the run happened on, which the answer's relative dates (`tomorrow`, `next Friday`) are
   * read against: a date the user or the agent stated as today, else the clock values the agent
   * saw, else the recording's start — in the run's time zone, or every zone when it is unknown.
   */
  day?: RunDay;
}

/** The tools a model call offered and the arguments each requires (from its JSON schema). */
function offeredTools(call: ModelCalledPayload): { names: string[]; required: Map<string, string[]> } {
  const names: string[] = [];
  const required = new Map<string, string[]>();
  for (const tool of toolsOf(call)) {
    names.push(tool.name);
    const schema = tool.parameters as { required?: unknown } | undefined;
    if (schema && Array.isArray(schema.required)) required.set(tool.name, schema.required.map(String));
  }
  return { names, required };
}

/** Builds the trajectory of a recording. `userInstruction` (the contract's input) counts as user text. */
export function trajectoryOf(recording: Recording, userInstruction?: string): Trajectory {
  const readBlob = (sha: string) => recording.readBlob(sha);
  const prices = recordingPrices(recording.manifest).table;
  const exchanges = new Map<string, HttpExchangePayload>();
  for (const e of recording.events) if (e.type === 'http.exchange') exchanges.set(e.payload.exchangeId, e.payload);
  const t: Trajectory = {
    modelSteps: [],
    calls: [],
    toolSteps: [],
    stepCount: 0,
    userText: userInstruction ?? '',
    systemText: '',
    observations: [],
    totalTokens: 0,
    cost: 0,
  };
  const resultById = new Map<string, string>();
  const userSeen = new Set<string>();
  const toolSeen = new Set<string>();
  let lastText: string | undefined;
  let finalOutput: string | undefined;
  const clock: Array<number | string> = [];
  const agentTexts: string[] = [];
  for (const e of recording.events) {
    if (e.type === 'step.started') t.stepCount++;
    else if (e.type === 'nondeterminism' && e.payload.kind === 'clock') clock.push(...e.payload.values);
    else if (e.type === 'model.called') {
      const p = e.payload;
      const offered = offeredTools(p);
      const step: ModelStep = {
        stepId: e.stepId,
        seq: e.seq,
        model: p.model,
        toolCalls: p.output.toolCalls.map((c) => {
          const parsed = jsonOrText(c.arguments);
          return {
            id: c.id,
            name: c.name,
            args: parsed,
            argsValid: c.arguments.trim() === '' || typeof parsed !== 'string',
          };
        }),
        offeredTools: offered.names,
        requiredArgs: offered.required,
      };
      if (p.output.text !== undefined) step.text = p.output.text;
      if (p.usage) step.usage = p.usage;
      t.modelSteps.push(step);
      if (p.system && !t.systemText.includes(p.system)) t.systemText += `${p.system}\n`;
      const observe = (x: string) => {
        if (toolSeen.has(x)) return;
        toolSeen.add(x);
        t.observations.push({ seq: e.seq, stepId: e.stepId, text: x });
      };
      // The conversation as the call's provider reads it (src/providers): tool results with the id of
      // the call they answer, the user's words, the system prompt — every API's shapes alike.
      for (const turn of turnsOf(p)) {
        for (const part of turn.parts) {
          if (part.kind === 'tool-result') {
            if (part.callId !== undefined) resultById.set(part.callId, part.text);
            observe(part.text);
          } else if (part.kind !== 'text') continue;
          else if (turn.role === 'user') {
            if (userSeen.has(part.text)) continue;
            userSeen.add(part.text);
            t.userText += `\n${part.text}`;
          } else if (turn.role === 'tool') observe(part.text);
          else if (turn.role === 'system' && !t.systemText.includes(part.text)) t.systemText += `${part.text}\n`;
        }
      }
      if (p.output.text) {
        lastText = p.output.text;
        agentTexts.push(p.output.text);
      }
      if (p.usage) {
        const u = p.usage;
        t.totalTokens += u.inputUncached + u.cacheRead + u.cacheWrite + u.output + u.reasoning;
        t.cost += modelCallCost(prices, p.model, u) ?? 0;
      }
    } else if (e.type === 'tool.called') {
      const p = e.payload;
      const x = p.exchangeId ? exchanges.get(p.exchangeId) : undefined;
      // The agent's telemetry (a tracer's exports) is neither a tool it called nor a step it took.
      if (x !== undefined && isTelemetry(x.request)) {
        t.stepCount--;
        continue;
      }
      let resultText = '';
      let result: unknown = p.result;
      if (p.result !== undefined) resultText = typeof p.result === 'string' ? p.result : JSON.stringify(p.result);
      else {
        const text = bodyText(p.resultBody, readBlob) ?? bodyText(x?.response?.body, readBlob);
        if (text !== undefined) {
          resultText = text;
          result = jsonOrText(text);
        }
      }
      if (typeof result === 'string') result = jsonOrText(result);
      const step: ToolStep = {
        stepId: e.stepId,
        seq: e.seq,
        name: p.name,
        stateType: p.stateType,
        args: p.args,
        result,
        resultText,
        mutating: p.mutating,
      };
      if (e.parentStepId !== undefined) step.parentStepId = e.parentStepId;
      // An HTTP status alone stays `status`, read with the body that says why; a failure the
      // transport does not show (an MCP result marked isError) is the step's error.
      const error =
        p.error ??
        x?.error ??
        (x?.response && x.response.status >= 400 ? undefined : toolCallFailure(p, x, { result }));
      if (error) step.error = error;
      if (x?.response) step.status = x.response.status;
      t.toolSteps.push(step);
      if (resultText && !toolSeen.has(resultText)) {
        toolSeen.add(resultText);
        t.observations.push({ seq: e.seq, stepId: e.stepId, text: resultText });
      }
    } else if (e.type === 'run.completed' && e.payload.finalOutput !== undefined) finalOutput = e.payload.finalOutput;
  }
  const links = linkToolSteps(recording.events);
  for (const step of t.toolSteps) {
    const link = links.get(step.stepId);
    if (link !== undefined && link.name !== step.name) {
      step.route = step.name;
      step.name = link.name;
    }
  }
  pairCalls(t, resultById, toolActions(recording.events));
  const lastModel = t.modelSteps.at(-1);
  const answer =
    finalOutput ?? (lastModel && lastModel.toolCalls.length === 0 ? lastModel.text : undefined) ?? lastText;
  if (answer !== undefined) t.finalAnswer = answer;
  const day = recordingDay(
    recording,
    [t.userText, t.systemText, ...agentTexts, ...(answer === undefined ? [] : [answer])],
    clock,
  );
  if (day !== undefined) t.day = day;
  return t;
}

/**
 * The day a run happened on, for its texts' relative dates: a date `stated` as today, else the
 * clock values the agent saw (`clock`, else read from the recording), else the manifest's
 * creation time, in the recorded time zone. One home for eval (trajectoryOf) and bisect (beliefAt).
 */
export function recordingDay(
  recording: Recording,
  stated: readonly string[],
  clock: ReadonlyArray<number | string> = recording.events.flatMap((e) =>
    e.type === 'nondeterminism' && e.payload.kind === 'clock' ? e.payload.values : [],
  ),
): RunDay | undefined {
  const { createdAt, runtime } = recording.manifest;
  return runDayOf({
    stated,
    clock,
    fallback: createdAt,
    ...(runtime.timeZone !== undefined && { timeZone: runtime.timeZone }),
  });
}

const facts = new WeakMap<Trajectory, FactIndex>();

/**
 * What the run knew, indexed once: the user's words (always known) and each observation from
 * the seq at which it became visible. Ground a claim with `factsOf(t).groundText(claim)`, an id
 * an action uses with `factsOf(t).groundId(id, call.seq)`.
 */
export function factsOf(t: Trajectory): FactIndex {
  let index = facts.get(t);
  if (index === undefined) {
    index = new FactIndex(t.day === undefined ? {} : { day: t.day });
    index.add(t.userText, { pos: -1, label: "the user's words" });
    for (const o of t.observations) index.add(o.text, { pos: o.seq, stepId: o.stepId, label: `step ${o.stepId}` });
    facts.set(t, index);
  }
  return index;
}

const entities = new WeakMap<Trajectory, EntityIndex>();

/** The objects with an id the run observed (orders, customers, passengers), each from the seq it became visible. */
export function entitiesOf(t: Trajectory): EntityIndex {
  let index = entities.get(t);
  if (index === undefined) {
    index = new EntityIndex();
    for (const o of t.observations) index.add(o.text, { pos: o.seq, stepId: o.stepId, label: `step ${o.stepId}` });
    entities.set(t, index);
  }
  return index;
}

/** The id-like values inside a call's arguments (keys like order_id, letter-digit tokens, URL and path parts). */
export function idsUsed(args: unknown): string[] {
  return [...new Set(usedValues(args).map((u) => u.value))];
}

/**
 * Pairs each requested call with the step that carried it out: the first step of its action
 * (toolActions, the rule bisect's no-repeat keeps too: linked by tool-call id, name, shared values).
 */
function pairCalls(t: Trajectory, resultById: Map<string, string>, actions: Map<number, ToolAction>): void {
  const stepFor = new Map<string, number>();
  for (const a of actions.values())
    if (a.callId !== undefined && a.thinkStepId !== undefined) stepFor.set(`${a.thinkStepId} ${a.callId}`, a.first);
  const toolStep = new Map(t.toolSteps.map((s) => [s.stepId, s]));
  for (const m of t.modelSteps) {
    for (const c of m.toolCalls) {
      const stepId = stepFor.get(`${m.stepId} ${c.id}`);
      const best = stepId === undefined ? undefined : toolStep.get(stepId);
      const call: AgentCall = {
        id: c.id,
        name: c.name,
        args: c.args,
        argsValid: c.argsValid,
        thinkStepId: m.stepId,
        stepId: stepId ?? m.stepId,
        seq: m.seq,
        mutating: best?.mutating ?? (stepId === undefined || best === undefined ? looksMutating(c.name) : false),
      };
      const result = resultById.get(c.id) ?? (best?.resultText || undefined);
      if (result !== undefined) call.resultText = result;
      if (best?.resultText) call.stepResultText = best.resultText;
      if (best?.error) call.error = best.error;
      if (best?.status !== undefined) call.status = best.status;
      t.calls.push(call);
    }
  }
}
