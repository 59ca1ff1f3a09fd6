// A synthetic agent run in the shape the recorder produces (THINK -> tool -> ... -> FINALIZE,
// OpenAI chat-completions or Anthropic messages payloads, http.exchange per call), built in memory.
// Used by the ledger tests and bench/ledger.ts to get recordings of any size.
import type { Manifest, Recording, RecordingEvent, Usage } from '../../src/recording/types.js';

export interface SyntheticOptions {
  /** Number of tool steps (the run has 2 × tools + 1 steps). */
  tools: number;
  provider?: 'openai' | 'anthropic';
  model?: string;
  /** How many recent messages the agent keeps in its context (default: all). */
  historyWindow?: number;
  replayOf?: string;
  /** For replays: how each http.exchange was served, by step id (default 'recording'). */
  servedFrom?: (stepId: number) => 'recording' | 'live' | 'blocked';
  /** Usage of the model call at step `stepId`, given the call's index. */
  usage?: (callIndex: number) => Usage;
  toolStateType?: (toolIndex: number) => 'RETRIEVE' | 'API_CALL' | 'DB_QUERY' | 'MEMORY_READ' | 'FILE_READ';
  prices?: Manifest['prices'];
  id?: string;
  /** The user's task (default USER_INSTRUCTION). */
  userInstruction?: string;
  /** The final answer (default FINAL_ANSWER). */
  answer?: string;
}

export const SYSTEM_PROMPT = 'You are a travel desk agent. Book flights only after checking availability.';
export const USER_INSTRUCTION = 'Book the cheapest flight from SFO to JFK on 2026-12-01 for Ada Lovelace.';
export const FINAL_ANSWER = 'Booked flight FL1 for Ada Lovelace.';

export function defaultUsage(callIndex: number): Usage {
  return {
    inputUncached: 100 + 10 * callIndex,
    cacheRead: callIndex === 0 ? 0 : 1000 + 50 * callIndex,
    cacheWrite: callIndex === 0 ? 200 : 0,
    output: 20 + callIndex,
    reasoning: callIndex % 2,
  };
}

/** Builds the recording. Event order per step follows the contract: started, call, exchange, completed. */
export function syntheticRecording(options: SyntheticOptions): Recording {
  const provider = options.provider ?? 'openai';
  const model = options.model ?? (provider === 'openai' ? 'gpt-4o-mini' : 'claude-sonnet-4-5');
  const usageOf = options.usage ?? defaultUsage;
  const traceId = `trace-${options.id ?? 'synthetic'}`;
  const events: RecordingEvent[] = [];
  const base = Date.parse('2026-11-24T10:00:00.000Z');
  let clock = 0;
  const time = (): string => new Date(base + clock++ * 10).toISOString();
  const push = (e: Omit<RecordingEvent, 'seq' | 'traceId' | 'time'>): void => {
    events.push({ ...e, seq: events.length, traceId, time: time() } as RecordingEvent);
  };
  const served = (stepId: number) => (options.replayOf ? (options.servedFrom?.(stepId) ?? 'recording') : undefined);

  push({ type: 'run.started', stepId: 0, payload: { command: ['node', 'agent.mjs'], cwd: '/work/agent' } });
  const messages: unknown[] =
    provider === 'openai'
      ? [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: options.userInstruction ?? USER_INSTRUCTION },
        ]
      : [{ role: 'user', content: options.userInstruction ?? USER_INSTRUCTION }];
  const tools = [{ type: 'function', function: { name: 'search_flights', parameters: { type: 'object' } } }];
  let step = 0;
  let exchange = 0;
  const window = (): unknown[] => {
    if (options.historyWindow === undefined || messages.length <= options.historyWindow + 2) return [...messages];
    const head = provider === 'openai' ? messages.slice(0, 2) : messages.slice(0, 1);
    return [...head, ...messages.slice(messages.length - options.historyWindow)];
  };
  const modelStep = (callIndex: number, final: boolean): string | undefined => {
    step++;
    const stepId = step;
    const callId = final ? undefined : `call_${callIndex}`;
    const args = JSON.stringify({ from: 'SFO', to: 'JFK', page: callIndex });
    push({
      type: 'step.started',
      stepId,
      payload: { stateType: final ? 'FINALIZE' : 'THINK', name: model, agentId: 'desk' },
    });
    const exchangeId = `x${++exchange}`;
    push({
      type: 'model.called',
      stepId,
      payload: {
        exchangeId,
        provider,
        api: provider === 'openai' ? 'chat.completions' : 'messages',
        model,
        streamed: false,
        ...(provider === 'anthropic' ? { system: SYSTEM_PROMPT } : {}),
        messages: window(),
        tools,
        output: final
          ? { text: options.answer ?? FINAL_ANSWER, toolCalls: [] }
          : { toolCalls: [{ id: callId as string, name: 'search_flights', arguments: args }] },
        usage: usageOf(callIndex),
        latencyMs: 50,
      },
    });
    push({
      type: 'http.exchange',
      stepId,
      payload: {
        exchangeId,
        request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {} },
        response: { status: 200, headers: {} },
        startedAt: time(),
        durationMs: 50,
        ...(served(stepId) ? { servedFrom: served(stepId) } : {}),
      },
    });
    push({ type: 'step.completed', stepId, payload: { status: 'success', latencyMs: 50 } });
    if (!final) {
      if (provider === 'openai') {
        messages.push({
          role: 'assistant',
          content: null,
          tool_calls: [{ id: callId, type: 'function', function: { name: 'search_flights', arguments: args } }],
        });
      } else {
        messages.push({
          role: 'assistant',
          content: [{ type: 'tool_use', id: callId, name: 'search_flights', input: JSON.parse(args) }],
        });
      }
    }
    return callId;
  };
  const toolStep = (toolIndex: number, parent: number, callId: string): void => {
    step++;
    const stepId = step;
    const stateType = options.toolStateType?.(toolIndex) ?? 'RETRIEVE';
    const flights = Array.from({ length: 3 }, (_, k) => ({
      id: `FL${toolIndex}-${k}`,
      from: 'SFO',
      to: 'JFK',
      price: 200 + k * 15 + toolIndex,
    }));
    const result = { flights, note: `page ${toolIndex}` };
    push({
      type: 'step.started',
      stepId,
      parentStepId: parent,
      payload: { stateType, name: 'search_flights', agentId: 'desk' },
    });
    const exchangeId = `x${++exchange}`;
    push({
      type: 'tool.called',
      stepId,
      parentStepId: parent,
      payload: {
        exchangeId,
        kind: 'http',
        name: 'search_flights',
        stateType,
        args: { from: 'SFO', to: 'JFK', page: toolIndex },
        result,
        mutating: false,
        latencyMs: 5,
      },
    });
    push({
      type: 'http.exchange',
      stepId,
      parentStepId: parent,
      payload: {
        exchangeId,
        request: { method: 'GET', url: `http://127.0.0.1:9/flights?page=${toolIndex}`, headers: {} },
        response: { status: 200, headers: {}, body: { size: 0, text: JSON.stringify(result) } },
        startedAt: time(),
        durationMs: 5,
        ...(served(stepId) ? { servedFrom: served(stepId) } : {}),
      },
    });
    push({ type: 'step.completed', stepId, parentStepId: parent, payload: { status: 'success', latencyMs: 5 } });
    // The agent passes only the flights (not the note) back to the model.
    const content = JSON.stringify(flights);
    if (provider === 'openai') messages.push({ role: 'tool', tool_call_id: callId, content });
    else messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content }] });
  };
  for (let i = 0; i < options.tools; i++) {
    const callId = modelStep(i, false) as string;
    toolStep(i, step, callId);
  }
  modelStep(options.tools, true);
  push({
    type: 'run.completed',
    stepId: 0,
    payload: { status: 'complete', exitCode: 0, finalOutput: options.answer ?? FINAL_ANSWER },
  });

  const manifest: Manifest = {
    format: 'tapedeck.recording/v1',
    id: options.id ?? 'synthetic',
    name: 'synthetic travel desk',
    createdAt: '2026-11-24T10:00:00.000Z',
    status: 'complete',
    agent: { command: ['node', 'agent.mjs'], cwd: '/work/agent' },
    runtime: { node: 'v20', platform: 'linux', sdkVersions: {} },
    redaction: { rules: [], keyId: 'k' },
    integrity: { events: events.length },
    ...(options.replayOf
      ? { replayOf: options.replayOf, replay: { mode: 'counterfactual' as const, overrides: {} } }
      : {}),
    ...(options.prices ? { prices: options.prices } : {}),
  };
  return {
    dir: `/nonexistent/${manifest.id}`,
    manifest,
    events,
    pre: {},
    post: {},
    readBlob: () => {
      throw new Error('no blobs in a synthetic recording');
    },
    warnings: [],
  };
}

/** Writes the synthetic run through the recording writer, so it is read back as any recording is. */
export async function writeSyntheticRecording(dir: string, options: SyntheticOptions): Promise<string> {
  const { createRecordingWriter } = await import('../../src/recording/index.js');
  const rec = syntheticRecording(options);
  const writer = await createRecordingWriter(dir, {
    id: rec.manifest.id,
    name: rec.manifest.name,
    agent: rec.manifest.agent,
    createdAt: rec.manifest.createdAt,
    traceId: rec.events[0]?.traceId ?? 'trace',
    ...(rec.manifest.replayOf ? { replayOf: rec.manifest.replayOf, replay: rec.manifest.replay } : {}),
    ...(rec.manifest.prices ? { prices: rec.manifest.prices } : {}),
  });
  for (const e of rec.events) {
    const { seq: _seq, traceId: _traceId, ...input } = e;
    writer.append(input);
  }
  await writer.close('complete');
  return writer.dir;
}
