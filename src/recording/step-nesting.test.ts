// A model answer given while decided tool calls are still out is the tool's work (THINK), not the
// run's answer (FINALIZE): StepNamer with the providers' reader of a call's conversation.
import { describe, expect, it } from 'vitest';
import { carriedToolCalls } from '../providers/index.js';
import type { StepRecord } from './step-writer.js';
import { StepNamer } from './tool-links.js';
import type { ModelCalledPayload, StateType, ToolCall } from './types.js';

type Message = Record<string, unknown>;

/** A Chat Completions model step as the recorder writes it (its type from modelStepType). */
function chatStep(stepId: number, system: string | undefined, messages: Message[], toolCalls: ToolCall[]): StepRecord {
  const payload: ModelCalledPayload = {
    exchangeId: `x${stepId}`,
    provider: 'openai',
    api: 'chat.completions',
    model: 'm',
    streamed: false,
    ...(system === undefined ? {} : { system }),
    messages: [...(system === undefined ? [] : [{ role: 'system', content: system }]), ...messages],
    output: toolCalls.length > 0 ? { toolCalls } : { text: 'answer', toolCalls: [] },
    latencyMs: 1,
  } as ModelCalledPayload;
  const stateType: StateType = toolCalls.length > 0 ? 'THINK' : 'FINALIZE';
  return {
    stepId,
    stateType,
    name: 'm',
    start: 0,
    end: 1,
    status: 'success',
    events: [{ type: 'model.called', payload }],
  };
}

const call = (id: string, name: string): ToolCall => ({ id, name, arguments: '{}' });
const asked = (calls: ToolCall[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
});
const result = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: 'done' });
const user = { role: 'user', content: 'What is the weather in Oslo?' };

const typesOf = (namer: StepNamer, steps: StepRecord[]) => steps.map((s) => namer.name(s).stateType);

describe('model calls inside a tool', () => {
  it('an agent used as a tool: its answer is THINK; the run ends on the outer agent’s FINALIZE', () => {
    const ask = call('c1', 'ask_forecaster');
    const get = call('c2', 'get_forecast');
    const steps = [
      chatStep(1, 'You are the front desk.', [user], [ask]),
      chatStep(2, 'You are the forecaster.', [{ role: 'user', content: 'Oslo' }], [get]),
      chatStep(3, 'You are the forecaster.', [{ role: 'user', content: 'Oslo' }, asked([get]), result('c2')], []),
      chatStep(4, 'You are the front desk.', [user, asked([ask]), result('c1')], []),
    ];
    expect(typesOf(new StepNamer(carriedToolCalls), steps)).toEqual(['THINK', 'THINK', 'THINK', 'FINALIZE']);
    // Without a reader of conversations, nothing is taken for a tool's work (as before).
    expect(typesOf(new StepNamer(), steps)).toEqual(['THINK', 'THINK', 'FINALIZE', 'FINALIZE']);
  });

  it('a RAG tool’s answer writer (no system prompt, no history) is THINK', () => {
    const search = call('s1', 'docs_search');
    const steps = [
      chatStep(1, 'You are a support agent.', [user], [search]),
      chatStep(2, undefined, [{ role: 'user', content: 'Context: … Question: refunds?' }], []),
      chatStep(3, 'You are a support agent.', [user, asked([search]), result('s1')], []),
    ];
    expect(typesOf(new StepNamer(carriedToolCalls), steps)).toEqual(['THINK', 'THINK', 'FINALIZE']);
  });

  it('an agent that pastes tool results back as text goes on as itself: its answer stays FINALIZE', () => {
    const lookup = call('l1', 'lookup');
    const steps = [
      chatStep(1, 'You are a desk.', [user], [lookup]),
      chatStep(2, 'You are a desk.', [user, { role: 'user', content: 'lookup said: snow' }], []),
    ];
    expect(typesOf(new StepNamer(carriedToolCalls), steps)).toEqual(['THINK', 'FINALIZE']);
  });

  it('several rounds of tool calls, then the answer: FINALIZE once', () => {
    const a = call('a', 'one');
    const b = call('b', 'two');
    const steps = [
      chatStep(1, 'P', [user], [a]),
      chatStep(2, 'P', [user, asked([a]), result('a')], [b]),
      chatStep(3, 'P', [user, asked([a]), result('a'), asked([b]), result('b')], []),
    ];
    expect(typesOf(new StepNamer(carriedToolCalls), steps)).toEqual(['THINK', 'THINK', 'FINALIZE']);
  });
});
