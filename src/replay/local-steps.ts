// The recorded steps a replay does not answer as calls: local steps (files, pg) it copies to keep step
// numbers aligned, the steps the agent begins itself (`until K` counts them), and the requests over a
// child's stdio, each taking its recorded step.
import { FILE_STEP_NAMES } from '../../sandbox/preload/shared-file-ops.mjs';
import type { Recording, RecordingEvent, ToolCalledPayload } from '../recording/index.js';
import { canonicalJson, jsonOrText } from '../recording/index.js';
import type { RecordedCall } from './recorded-calls.js';

/** The events of a recorded local step (files, pg: run for real in the sandbox) that a replay copies to keep step numbers aligned. */
export type LocalStepEvent = Extract<RecordingEvent, { type: 'step.started' | 'tool.called' | 'step.completed' }>;

/**
 * The recorded local steps: steps without a call in `calls`, by step id, each with its
 * step.started, tool.called and step.completed events. Built once; `between` answers a gap in
 * time proportional to what it returns, not to the length of the recording.
 */
export class LocalSteps {
  private readonly byStep = new Map<number, LocalStepEvent[]>();
  /** Step ids with local events, ascending. */
  private readonly steps: number[];
  /** The file steps among them (isFileStep). */
  private readonly files = new Set<number>();

  constructor(recording: Recording, calls: readonly RecordedCall[]) {
    const isCall = new Set(calls.map((c) => c.step));
    // Requests over a child's stdio are made again by the replay's agent (RpcSteps), and so are the
    // turns of a WebSocket conversation (written as the replay's answerer serves them: websocket.ts).
    for (const e of recording.events) if (isRpcStep(e) || e.type === 'websocket.exchange') isCall.add(e.stepId);
    for (const e of recording.events) {
      if (isCall.has(e.stepId)) continue;
      if (e.type !== 'step.started' && e.type !== 'tool.called' && e.type !== 'step.completed') continue;
      let list = this.byStep.get(e.stepId);
      if (!list) this.byStep.set(e.stepId, (list = []));
      list.push(e);
      if (isFileStep(e)) this.files.add(e.stepId);
    }
    this.steps = [...this.byStep.keys()].sort((a, b) => a - b);
  }

  /**
   * The local steps' events with after < stepId < before, in recorded order; with `files: false`
   * not the file steps (the replay writes the agent's own as they happen).
   */
  between(after: number, before: number, options: { files?: boolean } = {}): LocalStepEvent[] {
    const out: LocalStepEvent[] = [];
    let many = false;
    for (let i = firstAbove(this.steps, after); i < this.steps.length && (this.steps[i] as number) < before; i++) {
      const step = this.steps[i] as number;
      if (options.files === false && this.files.has(step)) continue;
      if (out.length > 0) many = true;
      for (const e of this.byStep.get(step) ?? []) out.push(e);
    }
    // Steps may interleave (parallel local steps): recorded order is seq order.
    return many ? out.sort((a, b) => a.seq - b.seq) : out;
  }
}

/**
 * The recorded steps a replay's agent begins without asking the replayer, ascending: its file
 * reads and writes under the fs root (made steps by sandbox/preload/shared-file-ops.mjs) and its requests over a
 * child's stdio. `until K` counts them: the preload's budget stops the agent before the one past K.
 */
export class SelfBegunSteps {
  private readonly all: number[] = [];
  private readonly files: number[] = [];

  constructor(recording: Recording) {
    for (const e of recording.events) {
      const file = isFileStep(e);
      if (!file && !isRpcStep(e)) continue;
      if (this.all.at(-1) !== e.stepId) this.all.push(e.stepId);
      if (file) this.files.push(e.stepId);
    }
    this.all.sort((a, b) => a - b);
    this.files.sort((a, b) => a - b);
  }

  /** How many lie in (after, upTo]. */
  count(after: number, upTo: number): number {
    return Math.max(0, firstAbove(this.all, upTo) - firstAbove(this.all, after));
  }

  /** The first file step after `after`. */
  nextFile(after: number): number | undefined {
    return this.files[firstAbove(this.files, after)];
  }
}

/**
 * The recorded file steps by what their call was (name, path, result or error), each to be taken
 * once: a file step the replay's agent makes is the recording's when one is left with the same
 * call, else the sandbox answered it (its tool call says so: `servedFrom: 'sandbox'`).
 */
export class RecordedFileSteps {
  private readonly left = new Map<string, number>();

  constructor(recording: Recording) {
    for (const e of recording.events) {
      if (e.type !== 'tool.called' || !isFileStep(e)) continue;
      const key = fileCallKey(e.payload);
      this.left.set(key, (this.left.get(key) ?? 0) + 1);
    }
  }

  /** Whether a recorded file step made this call; it is taken. `call` as the recording keeps it (redacted). */
  take(call: ToolCalledPayload): boolean {
    const key = fileCallKey(call);
    const n = this.left.get(key) ?? 0;
    if (n === 0) return false;
    this.left.set(key, n - 1);
    return true;
  }
}

/**
 * A file step's call without its timing: its name, path and outcome, however it was kept (the
 * result inline, or as a body: recorders have done both, `{ ok, bytes }` is the same outcome).
 */
function fileCallKey(p: ToolCalledPayload): string {
  return canonicalJson({ name: p.name, args: p.args, outcome: outcomeKey(p) });
}

/** A tool call's outcome (its result or error) however it was kept: the result inline or as a body. */
export function outcomeKey(p: ToolCalledPayload): string {
  const body = p.resultBody;
  const result = p.result ?? (body === undefined ? null : (jsonOrText(body.text) ?? body.base64 ?? body.blob ?? null));
  return canonicalJson({ result, error: p.error ?? null });
}

/** The index of the first element of ascending `list` above `value`. */
function firstAbove(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A step the recorder made of a file read or write under the fs root (sandbox/preload/shared-file-ops.mjs): no exchange, the path alone. */
export function isFileStep(e: RecordingEvent): boolean {
  if (e.type !== 'tool.called') return false;
  const p = e.payload;
  const args = p.args;
  return (
    p.kind === 'in-process' &&
    p.exchangeId === undefined &&
    (p.stateType === 'FILE_READ' || p.stateType === 'FILE_WRITE') &&
    FILE_STEP_NAMES.includes(p.name) &&
    args !== null &&
    typeof args === 'object' &&
    Object.keys(args).length === 1 &&
    typeof (args as { path?: unknown }).path === 'string'
  );
}

/** A step's tool call made over a child's stdio (MCP over stdio): kind `mcp`, no exchange. */
export function isRpcStep(e: RecordingEvent): boolean {
  return e.type === 'tool.called' && e.payload.kind === 'mcp' && e.payload.exchangeId === undefined;
}

/** A recorded request over a child's stdio, as a replay's same request takes its step. */
export interface RpcStep {
  step: number;
  /** Its answer (result or error), as fileCallKey reads one: the same request may be answered otherwise now. */
  outcome: string;
  parentStepId?: number;
  toolCallId?: string;
  route?: string;
}

/**
 * The recorded requests over a child's stdio (MCP over stdio), in step order. The replay's agent
 * talks to the server again; each of its requests takes the first recorded one not yet taken with
 * the same tool name and (redacted) arguments, whose step number and link it keeps.
 */
export class RpcSteps {
  private readonly steps: Array<RpcStep & { key: string }> = [];
  private readonly taken = new Set<number>();

  constructor(recording: Recording) {
    const started = new Map<number, Extract<RecordingEvent, { type: 'step.started' }>>();
    for (const e of recording.events) {
      if (e.type === 'step.started') started.set(e.stepId, e);
      else if (isRpcStep(e) && e.type === 'tool.called') {
        const head = started.get(e.stepId);
        const parentStepId = e.parentStepId ?? head?.parentStepId;
        this.steps.push({
          step: e.stepId,
          key: rpcKey(e.payload.name, e.payload.args),
          outcome: outcomeKey(e.payload),
          ...(parentStepId === undefined ? {} : { parentStepId }),
          ...(head?.payload.toolCallId === undefined ? {} : { toolCallId: head.payload.toolCallId }),
          ...(head?.payload.route === undefined ? {} : { route: head.payload.route }),
        });
      }
    }
    this.steps.sort((a, b) => a.step - b.step);
  }

  /** The first recorded step not yet taken of this request (its tool call as the recording keeps it: redacted). */
  take(call: Pick<ToolCalledPayload, 'name' | 'args'>): RpcStep | undefined {
    const key = rpcKey(call.name, call.args);
    const found = this.steps.find((s) => !this.taken.has(s.step) && s.key === key);
    if (found !== undefined) this.taken.add(found.step);
    return found;
  }
}

function rpcKey(name: string, args: unknown): string {
  return `${name}\u0000${canonicalJson(args ?? null)}`;
}
