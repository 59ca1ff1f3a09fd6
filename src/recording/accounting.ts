// Honest accounting of a recording: tool calls a model decided on that never showed up as a step.
// An agent whose tool runs a program (curl, psql), writes through a socket, or reaches anything
// the capture layers do not see leaves exactly this trace: the model asks for the tool, the next
// model call carries its result, and nothing in between. Such a recording cannot be replayed
// faithfully (the tool will act again, or act differently), so it is said at record time and by
// `tapedeck verify`.
import type { EventOf, EventType, RecordingEvent } from './types.js';

export interface SilentToolCall {
  /** The step of the model call that asked for the tool. */
  step: number;
  toolCallId: string;
  name: string;
}

/** What the account needs of an event: its type, step and payload (as written or as read back). */
interface AccountedEvent {
  type: EventType;
  stepId: number;
  payload: unknown;
}

/**
 * The decided tool calls with no step of their own: no step names their tool-call id, and no
 * step at all (a tool, an HTTP call, a file or row change) came between the model call and the
 * next one. Kept as the events go by (the recorder feeds it what it writes, so `record` needs no
 * read-back of the recording), holding ids only: a step number per step, the decided calls.
 */
export class ToolCallAccount {
  private readonly answered = new Set<string>();
  private readonly steps: number[] = [];
  private readonly models: Array<{ step: number; calls: ReadonlyArray<{ id: string; name: string }> }> = [];

  see(e: AccountedEvent): void {
    if (e.type === 'step.started') {
      const payload = e.payload as EventOf<'step.started'>['payload'];
      this.steps.push(e.stepId);
      if (payload.toolCallId) this.answered.add(payload.toolCallId);
    } else if (e.type === 'model.called') {
      const payload = e.payload as EventOf<'model.called'>['payload'];
      // An embeddings call decides nothing and carries no tool's result: it is work done between
      // two decisions (a RAG tool embedding its query), a step like any other.
      if (payload.output.embeddings !== undefined) return;
      this.models.push({
        step: e.stepId,
        calls: payload.output.toolCalls.map(({ id, name }) => ({ id, name })),
      });
    }
  }

  silent(): SilentToolCall[] {
    const models = [...this.models].sort((a, b) => a.step - b.step);
    const steps = [...this.steps].sort((a, b) => a - b);
    const out: SilentToolCall[] = [];
    let s = 0;
    models.forEach((m, i) => {
      const next = models[i + 1]?.step ?? Number.POSITIVE_INFINITY;
      while (s < steps.length && steps[s]! <= m.step) s++;
      const between = s < steps.length && steps[s]! < next;
      for (const call of m.calls) {
        if (this.answered.has(call.id) || between) continue;
        out.push({ step: m.step, toolCallId: call.id, name: call.name });
      }
    });
    return out;
  }

  warnings(): string[] {
    return this.silent().map(warning);
  }
}

export function silentToolCalls(events: readonly RecordingEvent[]): SilentToolCall[] {
  const account = new ToolCallAccount();
  for (const e of events) account.see(e);
  return account.silent();
}

/** One warning line per silent tool call, saying what to do. */
export function silentToolCallWarnings(events: readonly RecordingEvent[]): string[] {
  return silentToolCalls(events).map(warning);
}

function warning(c: SilentToolCall): string {
  return `step ${c.step}: the model asked for tool "${c.name}" (${c.toolCallId}) and no call of it shows in the recording — it may use a side channel (a program such as curl or psql, a socket) that was not captured; a replay cannot answer it. Record with --isolate to capture every process's HTTP calls.`;
}
