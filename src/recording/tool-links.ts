// Which decided tool call a step answers. A model step decides tool calls (`get_order {order_id:
// O-7713}`); the steps that follow carry them out under their own names (`GET /orders/O-7713`, a
// file write, database changes). A step is linked to the call it answers by the tool-call id the
// recorder wrote, else by name and by the values the call's arguments share with the step's
// request, path, body, files and rows. Steps are then named after the agent's tool, the route kept
// as detail. Pure; used by the recorder and the replayer as they write steps (StepNamer) and by
// every reader (stepNames: for recordings made before links were written).
import { isBookkeepingTable } from './bookkeeping.js';
import type { StepRecord } from './step-writer.js';
import type { ModelCalledPayload, RecordingEvent, StateType, ToolCall } from './types.js';

/** The decided call a step answers. */
export interface ToolLink {
  /** The model step that decided the call. */
  thinkStepId: number;
  callId: string;
  /** The agent's tool name: what the step is named after. */
  name: string;
  /** The name the capture layer gave the step (`POST /refunds`, `database changes`), kept as detail. */
  route: string;
}

/** What a step did, as far as matching it to a call goes. */
export interface StepFacts {
  /** The capture layer's name for it (tool name for in-process and MCP tools, `METHOD /path` for HTTP). */
  name: string;
  /**
   * Linked by evidence only, never by position: protocol chatter (OBSERVE steps: an MCP
   * handshake, a notification stream), and a step that is only world changes ("file changes"
   * between calls), whose call, if any, may still be answered by a step that comes later.
   */
  observe?: boolean;
  /** Values the step used: argument values, URL path segments and query values, body values, paths, row values. */
  atoms: Set<string>;
}

const norm = (v: string) => v.trim().toLowerCase();

/** Every scalar inside a value, as normalised text (paths split into their segments too). */
export function atomsOf(value: unknown, into: Set<string> = new Set(), depth = 0): Set<string> {
  if (depth > 10 || value === null || value === undefined) return into;
  if (typeof value === 'string') {
    const v = norm(value);
    // JSON held as its text (a json/jsonb column's value in a row, a JSON string argument): its
    // values are the step's, as when the row held it parsed.
    if ((v.startsWith('{') || v.startsWith('[')) && v.length <= 100_000) {
      const inner = parse(value);
      if (typeof inner === 'object' && inner !== null) atomsOf(inner, into, depth + 1);
    }
    if (v.length < 2 || v.length > 200) return into;
    into.add(v);
    if (v.includes('/') && !/\s/.test(v)) for (const part of v.split('/')) if (part.length >= 2) into.add(part);
  } else if (typeof value === 'number' || typeof value === 'bigint') into.add(String(value));
  else if (Array.isArray(value)) for (const v of value) atomsOf(v, into, depth + 1);
  else if (typeof value === 'object') for (const v of Object.values(value)) atomsOf(v, into, depth + 1);
  return into;
}

/** The atoms of a URL: decoded path segments and query values. */
export function urlAtoms(url: string, into: Set<string> = new Set()): Set<string> {
  try {
    const u = new URL(url, 'http://localhost');
    for (const segment of u.pathname.split('/')) {
      if (segment === '') continue;
      try {
        atomsOf(decodeURIComponent(segment), into);
      } catch {
        atomsOf(segment, into);
      }
    }
    for (const [, v] of u.searchParams) atomsOf(v, into);
  } catch {
    // not a URL
  }
  return into;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Words that name no tool: a route's method, and its version and prefix segments. */
const ROUTE_WORDS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'api', 'mcp']);

/**
 * The words of a name, lowercased, a plural's `s` dropped: `get_price`, `getPrices` and
 * `GET /v1/prices/{id}` all hold `price`. A route's method and prefixes are left out.
 */
export function nameWords(name: string): Set<string> {
  const words = new Set<string>();
  for (const raw of name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(/[^A-Za-z]+/)) {
    const w = raw.toLowerCase();
    if (w.length < 3 || ROUTE_WORDS.has(w) || /^v\d*$/.test(w)) continue;
    words.add(w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);
  }
  return words;
}

/**
 * The call among `calls` that a step answers: by the same name (+1000), then by the most values
 * shared with the call's arguments, then by the words the tool's name shares with the step's
 * (`get_price` for `GET /price`: calls made at once often take the same arguments); among
 * equals, the first not yet answered. With no evidence at all, the first call not yet answered
 * (a positional match, as agents run calls in order), except for a step linked by evidence only
 * (`observe`), which the words of a name never link.
 */
export function pickCall(
  calls: readonly ToolCall[],
  step: StepFacts,
  answered: ReadonlySet<string>,
): ToolCall | undefined {
  let best: ToolCall | undefined;
  let bestScore = 0;
  const stepWords = step.observe ? new Set<string>() : nameWords(step.name);
  for (const call of calls) {
    let score = call.name === step.name ? 1000 : 0;
    for (const a of atomsOf(parse(call.arguments))) if (step.atoms.has(a)) score++;
    // A tie-break, never more than one shared value, nor than the 0.5 an answered call gives up.
    let shared = 0;
    for (const w of nameWords(call.name)) if (stepWords.has(w)) shared++;
    score += Math.min(0.4, 0.2 * shared);
    if (score === 0) continue;
    // A call already answered needs more evidence than one that is not (a tool may take several steps).
    const adjusted = answered.has(call.id) ? score - 0.5 : score;
    if (adjusted > bestScore) {
      best = call;
      bestScore = adjusted;
    }
  }
  if (best !== undefined || step.observe) return best;
  return calls.find((c) => !answered.has(c.id));
}

/**
 * The tool calls a model call's conversation carries back to the model: the ids of the calls and
 * results in its input (a result without an id counts by its tool's name); empty for a fresh
 * conversation. Read by the provider that decodes the call (src/providers: carriedToolCalls).
 */
export type CarriedCalls = (call: ModelCalledPayload) => ReadonlySet<string>;

/** Model steps that decided tool calls not yet carried back to a model: a model call now is inside a tool. */
interface OpenCalls {
  ids: ReadonlySet<string>;
  /** The deciding call's system prompt: a later call with the same prompt is its agent going on. */
  system: string | undefined;
}

/**
 * Names steps as they are written, by the recorder and the replayer alike, so that a step is called
 * the same whoever wrote it. A model step that decided tool calls is remembered (the last one,
 * `lastThink`, is the parent of the tool steps after it); a step under it that carries out one of
 * its calls is named after the agent's tool (`issue_refund`), with the call's id and the capture
 * layer's name (`POST /refunds`) kept as its route.
 *
 * A model answer made while decided calls are still out (an agent used as another's tool, a RAG
 * tool's answer writer) is the tool's work, not the run's answer: THINK, not FINALIZE. Decided
 * calls are out until a model call carries them back (their ids in its conversation), or the
 * deciding agent goes on without them (a call with its system prompt, the results pasted as text).
 * @example const namer = new StepNamer(carriedToolCalls); for (const e of stepEvents(namer.name(step))) writer.append(e);
 */
export class StepNamer {
  /** The tool calls each recent model step decided, and which of them a step has answered. */
  private readonly decided = new Map<number, { calls: readonly ToolCall[]; answered: Set<string> }>();
  #lastThink: number | undefined;
  readonly #open: OpenCalls[] = [];

  /** `carried` reads a model call's conversation (without it, no answer is taken for a tool's work). */
  constructor(private readonly carried?: CarriedCalls) {}

  /** The last model step that decided tool calls: the parent of the tool steps that follow it. */
  get lastThink(): number | undefined {
    return this.#lastThink;
  }

  /** The step as it is written: named after the decided call it carries out, when it carries out one. */
  name(step: StepRecord): StepRecord {
    let model: ModelCalledPayload | undefined;
    for (const e of step.events) if (e.type === 'model.called') model = e.payload as ModelCalledPayload;
    if (model !== undefined) {
      const calls = model.output.toolCalls;
      const inTool = this.track(model);
      if (calls.length > 0 && step.status === 'success') {
        this.decide(step.stepId, calls);
        this.#open.push({ ids: new Set(calls.map((c) => c.id)), system: model.system });
      }
      return inTool && step.stateType === 'FINALIZE' ? { ...step, stateType: 'THINK' } : step;
    }
    const decided = step.parentStepId === undefined ? undefined : this.decided.get(step.parentStepId);
    if (decided === undefined) return step;
    if (step.toolCallId !== undefined) {
      decided.answered.add(step.toolCallId);
      return step;
    }
    const call = pickCall(decided.calls, stepFacts(step.name, step.events, step.stateType), decided.answered);
    if (call === undefined) return step;
    decided.answered.add(call.id);
    const route = step.route ?? (call.name === step.name ? undefined : step.name);
    return { ...step, name: call.name, toolCallId: call.id, ...(route === undefined ? {} : { route }) };
  }

  /** Closes the decided calls a model call carries back; whether calls are still out (it is inside a tool). */
  private track(model: ModelCalledPayload): boolean {
    // Nothing out: nothing to close, and no call can be inside a tool (the conversation goes unread).
    if (this.carried === undefined || this.#open.length === 0) return false;
    const back = this.carried(model);
    const before = this.#open.length;
    for (let i = this.#open.length - 1; i >= 0; i--) {
      const open = this.#open[i] as OpenCalls;
      if ([...open.ids].some((id) => back.has(id))) this.#open.splice(i, 1);
    }
    // Results carried back under ids of the provider's own making (no id on the wire): the latest calls.
    if (back.size > 0 && this.#open.length === before) this.#open.pop();
    // The deciding agent going on with the results in its own words: its calls, and those after them, are done.
    if (back.size === 0 && model.system !== undefined) {
      const mine = this.#open.findIndex((open) => open.system === model.system);
      if (mine >= 0) this.#open.splice(mine);
    }
    return this.#open.length > 0;
  }

  private decide(stepId: number, calls: readonly ToolCall[]): void {
    this.#lastThink = stepId;
    this.decided.set(stepId, { calls, answered: new Set() });
    // A call still in flight may answer an earlier model step; older ones are done.
    for (const old of this.decided.keys()) if (this.decided.size > 8) this.decided.delete(old);
    if (this.#open.length > 8) this.#open.shift();
  }
}

/** A step's events as the step writer takes them (type + payload). */
export interface StepEventLike {
  type: RecordingEvent['type'];
  payload: unknown;
}

/** What a step did, from its events: the values of its arguments, request (URL, body), files and rows. */
export function stepFacts(
  name: string,
  events: readonly StepEventLike[],
  stateType?: StateType,
  into: Set<string> = new Set(),
): StepFacts {
  for (const e of events) addStepAtoms(e as RecordingEvent, into);
  const changesOnly = !events.some((e) => e.type === 'tool.called' || e.type === 'http.exchange');
  return { name, atoms: into, ...(stateType === 'OBSERVE' || changesOnly ? { observe: true } : {}) };
}

function addStepAtoms(e: RecordingEvent, atoms: Set<string>): void {
  switch (e.type) {
    case 'tool.called':
      atomsOf(e.payload.args, atoms);
      break;
    case 'http.exchange': {
      urlAtoms(e.payload.request.url, atoms);
      const body = e.payload.request.body?.text;
      if (body !== undefined) atomsOf(parse(body), atoms);
      break;
    }
    case 'fs.changed':
      atomsOf(e.payload.path, atoms);
      break;
    case 'db.changed':
      // A checkpointer's rows hold every call's arguments so far: no evidence of which it carried out.
      if (!isBookkeepingTable(e.payload.table)) atomsOf(e.payload.after ?? e.payload.before ?? e.payload.key, atoms);
      break;
    default:
      break;
  }
}

/** The tool steps of a recording, each linked to the decided call it answers (steps with no deciding model step are absent). */
export function linkToolSteps(events: readonly RecordingEvent[]): Map<number, ToolLink> {
  const callsOf = new Map<number, ToolCall[]>();
  const answered = new Map<number, Set<string>>();
  interface Pending {
    stepId: number;
    parent?: number;
    startedName: string;
    observe: boolean;
    recordedCallId?: string;
    recordedRoute?: string;
    captureName?: string;
    atoms: Set<string>;
    isModel: boolean;
    /** A call of its own (tool.called, http.exchange), not only world changes. */
    hasCall: boolean;
  }
  const steps = new Map<number, Pending>();
  const stepOf = (e: RecordingEvent): Pending => {
    let s = steps.get(e.stepId);
    if (s === undefined) {
      s = { stepId: e.stepId, startedName: '', observe: false, atoms: new Set(), isModel: false, hasCall: false };
      if (e.parentStepId !== undefined) s.parent = e.parentStepId;
      steps.set(e.stepId, s);
    }
    if (s.parent === undefined && e.parentStepId !== undefined) s.parent = e.parentStepId;
    return s;
  };
  for (const e of events) {
    if (e.stepId < 1) continue;
    const s = stepOf(e);
    if (e.type === 'step.started') {
      s.startedName = e.payload.name;
      s.observe = e.payload.stateType === 'OBSERVE';
      if (e.payload.toolCallId !== undefined) s.recordedCallId = e.payload.toolCallId;
      if (e.payload.route !== undefined) s.recordedRoute = e.payload.route;
    } else if (e.type === 'model.called') {
      s.isModel = true;
      if (e.payload.output.toolCalls.length > 0) callsOf.set(e.stepId, e.payload.output.toolCalls);
    } else {
      if (e.type === 'tool.called') s.captureName = e.payload.name;
      if (e.type === 'tool.called' || e.type === 'http.exchange') s.hasCall = true;
      addStepAtoms(e, s.atoms);
    }
  }
  const links = new Map<number, ToolLink>();
  for (const s of [...steps.values()].sort((a, b) => a.stepId - b.stepId)) {
    if (s.isModel || s.parent === undefined) continue;
    const calls = callsOf.get(s.parent);
    if (calls === undefined) continue;
    let done = answered.get(s.parent);
    if (done === undefined) answered.set(s.parent, (done = new Set()));
    const recorded = s.recordedCallId === undefined ? undefined : calls.find((c) => c.id === s.recordedCallId);
    const route = s.recordedRoute ?? s.captureName ?? s.startedName;
    const call = recorded ?? pickCall(calls, { name: route, atoms: s.atoms, observe: s.observe || !s.hasCall }, done);
    if (call === undefined) continue;
    done.add(call.id);
    links.set(s.stepId, { thinkStepId: s.parent, callId: call.id, name: call.name, route });
  }
  return links;
}

/** What a step is called, as every reader shows it. */
export interface StepName {
  /** The agent's tool for a step that carries out a decided call; else the recorded name (the model, a route). */
  name: string;
  /** The capture layer's name, kept as detail when the step is named after the agent's tool (`POST /refunds`). */
  route?: string;
  toolCallId?: string;
  /** The model step that decided the call. */
  thinkStepId?: number;
}

const namesCache = new WeakMap<readonly RecordingEvent[], Map<number, StepName>>();

/**
 * The name of every step: the recorded name, or — for steps recorded before links were written,
 * and for replays — the decided tool call it answers, with the recorded name as its route.
 */
export function stepNames(events: readonly RecordingEvent[]): Map<number, StepName> {
  const cached = namesCache.get(events);
  if (cached !== undefined) return cached;
  const links = linkToolSteps(events);
  const names = new Map<number, StepName>();
  for (const e of events) {
    if (e.type !== 'step.started' || names.has(e.stepId)) continue;
    const link = links.get(e.stepId);
    const recorded = e.payload.name;
    const name: StepName = { name: link?.name ?? recorded };
    const route = e.payload.route ?? (link !== undefined && link.name !== recorded ? recorded : undefined);
    if (route !== undefined && route !== name.name) name.route = route;
    if (link !== undefined) {
      name.toolCallId = link.callId;
      name.thinkStepId = link.thinkStepId;
    }
    names.set(e.stepId, name);
  }
  namesCache.set(events, names);
  return names;
}

/** The agent action a step is part of. */
export interface ToolAction {
  /** The action's first step: steps with the same `first` are one action. */
  first: number;
  /** The decided tool call the action carries out, when one is linked. */
  callId?: string;
  thinkStepId?: number;
}

const actionsCache = new WeakMap<readonly RecordingEvent[], Map<number, ToolAction>>();

/**
 * The action each tool step is part of. Steps that carry out one decided tool call (its id, linked
 * as stepNames links it, under the model step that decided it) are one action: an MCP call and
 * the HTTP request its server made for it, a tool() and its fetch. So is a step nested under a
 * tool step (its parentStepId), with its parent's. Every other tool step is an action of its own;
 * model steps have none. One rule for eval (a call and the step that ran it) and bisect (no-repeat).
 * @example toolActions(events).get(10)?.first // 9: step 10's POST carried out step 9's MCP call
 */
export function toolActions(events: readonly RecordingEvent[]): Map<number, ToolAction> {
  const cached = actionsCache.get(events);
  if (cached !== undefined) return cached;
  const names = stepNames(events);
  const parents = new Map<number, number>();
  const models = new Set<number>();
  const steps = new Set<number>();
  for (const e of events) {
    if (e.stepId < 1) continue;
    steps.add(e.stepId);
    if (e.type === 'model.called') models.add(e.stepId);
    if (e.parentStepId !== undefined && !parents.has(e.stepId)) parents.set(e.stepId, e.parentStepId);
  }
  const actions = new Map<number, ToolAction>();
  const firstOfCall = new Map<string, number>();
  const resolve = (step: number, depth: number): ToolAction | undefined => {
    if (models.has(step) || !steps.has(step)) return undefined;
    const known = actions.get(step);
    if (known !== undefined) return known;
    const parent = parents.get(step);
    // Nested under a tool step: part of the parent's action (a cycle of parents is left at its depth).
    const nested = parent === undefined || depth > 64 ? undefined : resolve(parent, depth + 1);
    let action: ToolAction;
    if (nested !== undefined) action = nested;
    else {
      const name = names.get(step);
      if (name?.toolCallId !== undefined && name.thinkStepId !== undefined) {
        const key = `${name.thinkStepId} ${name.toolCallId}`;
        const first = firstOfCall.get(key) ?? step;
        firstOfCall.set(key, first);
        action = { first, callId: name.toolCallId, thinkStepId: name.thinkStepId };
      } else action = { first: step };
    }
    actions.set(step, action);
    return action;
  };
  for (const step of [...steps].sort((a, b) => a - b)) resolve(step, 0);
  actionsCache.set(events, actions);
  return actions;
}
