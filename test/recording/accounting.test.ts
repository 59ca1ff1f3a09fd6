// The silent-tool-call account `record` keeps as it writes (ToolCallAccount, fed event by event,
// in any order of steps) must say what reading the whole recording back says. Checked against a
// direct statement of the rule on random runs: model steps deciding tool calls, steps that carry
// some of them out, steps of other kinds in between, events arriving out of step order.
import { describe, expect, it } from 'vitest';
import { type SilentToolCall, ToolCallAccount } from '../../src/recording/index.js';

type Ev = { type: 'step.started' | 'model.called'; stepId: number; payload: unknown };

/** The rule, stated plainly: quadratic, no cursor. */
function reference(events: Ev[]): SilentToolCall[] {
  const answered = new Set<string>();
  const steps: number[] = [];
  const models: Array<{ step: number; calls: Array<{ id: string; name: string }> }> = [];
  for (const e of events) {
    const p = e.payload as { toolCallId?: string; output?: { toolCalls: Array<{ id: string; name: string }> } };
    if (e.type === 'step.started') {
      steps.push(e.stepId);
      if (p.toolCallId) answered.add(p.toolCallId);
    } else models.push({ step: e.stepId, calls: p.output!.toolCalls });
  }
  models.sort((a, b) => a.step - b.step);
  const out: SilentToolCall[] = [];
  models.forEach((m, i) => {
    const next = models[i + 1]?.step ?? Number.POSITIVE_INFINITY;
    const between = steps.some((s) => s > m.step && s < next);
    for (const c of m.calls)
      if (!answered.has(c.id) && !between) out.push({ step: m.step, toolCallId: c.id, name: c.name });
  });
  return out;
}

function randomRun(seed: number): Ev[] {
  let x = seed;
  const rand = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  const events: Ev[] = [];
  const pending: string[] = [];
  for (let step = 1; step <= 40; step++) {
    const kind = rand();
    if (kind < 0.4) {
      const calls = Array.from({ length: Math.floor(rand() * 3) }, (_, i) => ({
        id: `c${step}-${i}`,
        name: `tool${i}`,
      }));
      pending.push(...calls.map((c) => c.id));
      events.push({ type: 'step.started', stepId: step, payload: { stateType: 'think' } });
      events.push({ type: 'model.called', stepId: step, payload: { output: { toolCalls: calls } } });
    } else {
      const id = rand() < 0.5 ? pending.shift() : undefined;
      events.push({
        type: 'step.started',
        stepId: step,
        payload: { stateType: 'act', ...(id ? { toolCallId: id } : {}) },
      });
    }
  }
  // Concurrent writers append steps out of order.
  if (rand() < 0.5) events.reverse();
  return events;
}

describe('ToolCallAccount', () => {
  it('says what the rule says, on 300 random runs (silent calls found, carried-out ones not)', () => {
    let found = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const events = randomRun(seed);
      const account = new ToolCallAccount();
      for (const e of events) account.see(e);
      const expected = reference(events);
      expect(account.silent()).toEqual(expected);
      found += expected.length;
    }
    expect(found).toBeGreaterThan(0);
  });

  it('names the tool and says how to capture it', () => {
    const account = new ToolCallAccount();
    account.see({ type: 'step.started', stepId: 1, payload: { stateType: 'think' } });
    account.see({
      type: 'model.called',
      stepId: 1,
      payload: { output: { toolCalls: [{ id: 'call_1', name: 'refund' }] } },
    });
    account.see({ type: 'step.started', stepId: 2, payload: { stateType: 'think' } });
    account.see({ type: 'model.called', stepId: 2, payload: { output: { toolCalls: [] } } });
    expect(account.warnings()).toEqual([expect.stringMatching(/^step 1: .*tool "refund" \(call_1\).*--isolate/)]);
  });
});
