// Honest accounting of a recording: tool calls a model decided on that never showed up as a step.
// An agent whose tool runs a program (curl, psql), writes through a socket, or reaches anything
// the capture layers do not see leaves exactly this trace: the model asks for the tool, the next
// model call carries its result, and nothing in between. Such a recording cannot be replayed
// faithfully (the tool will act again, or act differently), so it is said at record time and by
// `tapedeck verify`.
import type { RecordingEvent } from './types.js';

export interface SilentToolCall {
  /** The step of the model call that asked for the tool. */
  step: number;
  toolCallId: string;
  name: string;
}

/**
 * The decided tool calls with no step of their own: no step names their tool-call id, and no
 * step at all (a tool, an HTTP call, a file or row change) came between the model call and the
 * next one.
 */
export function silentToolCalls(events: readonly RecordingEvent[]): SilentToolCall[] {
  const answered = new Set<string>();
  const stepType = new Map<number, string>();
  for (const e of events) {
    if (e.type !== 'step.started') continue;
    stepType.set(e.stepId, e.payload.stateType);
    if (e.payload.toolCallId) answered.add(e.payload.toolCallId);
  }
  const modelSteps: Array<{ step: number; calls: Array<{ id: string; name: string }> }> = [];
  for (const e of events) {
    if (e.type !== 'model.called') continue;
    modelSteps.push({ step: e.stepId, calls: e.payload.output.toolCalls });
  }
  modelSteps.sort((a, b) => a.step - b.step);
  const steps = [...stepType.keys()].sort((a, b) => a - b);
  const out: SilentToolCall[] = [];
  modelSteps.forEach((m, i) => {
    if (m.calls.length === 0) return;
    const next = modelSteps[i + 1]?.step ?? Number.POSITIVE_INFINITY;
    const between = steps.some((s) => s > m.step && s < next);
    for (const call of m.calls) {
      if (answered.has(call.id) || between) continue;
      out.push({ step: m.step, toolCallId: call.id, name: call.name });
    }
  });
  return out;
}

/** One warning line per silent tool call, saying what to do. */
export function silentToolCallWarnings(events: readonly RecordingEvent[]): string[] {
  return silentToolCalls(events).map(
    (c) =>
      `step ${c.step}: the model asked for tool "${c.name}" (${c.toolCallId}) and no call of it shows in the recording — it may use a side channel (a program such as curl or psql, a socket) that was not captured; a replay cannot answer it. Record with --isolate to capture every process's HTTP calls.`,
  );
}
