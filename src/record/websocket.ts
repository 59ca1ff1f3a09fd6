// A WebSocket turn as the step it is, made alike by the recorder (from the capture layer's `ws`
// message, src/record/preload/record-websocket.mjs) and the replayer (from the conversation it
// answered, src/replay/websocket.ts): its websocket.exchange (the messages, with their bodies
// stored) and its tool call (classified as an HTTP call is, by the user's rules first, with method
// `WS`: a JSON-RPC `tools/call` sent over it is an MCP_CALL, anything else an API_CALL).
import { type ConversationCalls, modelStepType } from '../providers/index.js';
import { parseUntrusted } from '../recording/json.js';
import type { StepEvent } from '../recording/step-writer.js';
import type {
  Body,
  ModelCalledPayload,
  StateType,
  ToolCalledPayload,
  WebSocketExchangePayload,
  WebSocketMessage,
} from '../recording/types.js';
import { classifyHttp, type ToolRule } from './classify.js';
import { type MessageOf, wireBytes } from './protocol.js';

/** One message of a turn before its body is stored: its bytes (a text message's as a string). */
export interface TurnMessage {
  type: WebSocketMessage['type'];
  offsetMs: number;
  data?: string | Uint8Array | undefined;
  code?: number | undefined;
  reason?: string | undefined;
  drawn?: WebSocketMessage['drawn'] | undefined;
}

/** One turn as the capture layer or the replay's answerer saw it. */
export interface Turn {
  exchangeId: string;
  connectionId: string;
  turn: number;
  url: string;
  kind: WebSocketExchangePayload['kind'];
  /** ms since the epoch: the turn's start and end. */
  ts: number;
  end: number;
  request?: WebSocketExchangePayload['request'];
  response?: WebSocketExchangePayload['response'];
  sent?: TurnMessage | undefined;
  received: TurnMessage[];
  closed?: boolean | undefined;
  servedFrom?: WebSocketExchangePayload['servedFrom'];
}

/** What a message carries as a value for the step's arguments or result: JSON, text, or its size. */
export function messageValue(message: Pick<WebSocketMessage, 'type' | 'body' | 'code' | 'reason'>): unknown {
  if (message.type === 'close')
    return { close: message.code ?? null, ...(message.reason ? { reason: message.reason } : {}) };
  const text = message.body?.text;
  if (text === undefined) return { [message.type]: message.body?.size ?? 0 };
  if (message.type !== 'text') return { [message.type]: text };
  try {
    return parseUntrusted(text);
  } catch {
    return text;
  }
}

/** A turn as its step: what websocketStep makes of it. */
export interface WebSocketStep {
  exchange: WebSocketExchangePayload;
  tool: ToolCalledPayload;
  failed: boolean;
  /** The model calls of a model API spoken over the conversation that this turn ends (see stepOfTurn). */
  models: ModelCalledPayload[];
}

/**
 * The turn's websocket.exchange and tool.called, and with `calls` (the run's conversations, fed
 * every turn in order) the model calls it ends; `store` keeps a message's bytes as a Body (the
 * writer's: inline or a blob, redacted as it is written).
 */
export function websocketStep(
  turn: Turn,
  store: (data: string | Uint8Array) => Body,
  rules: readonly ToolRule[] = [],
  calls?: ConversationCalls,
): WebSocketStep {
  const message = (m: TurnMessage): WebSocketMessage => ({
    type: m.type,
    offsetMs: Math.max(0, m.offsetMs),
    ...(m.data === undefined || m.type === 'close' ? {} : { body: store(m.data) }),
    ...(m.code === undefined ? {} : { code: m.code }),
    ...(m.reason ? { reason: m.reason } : {}),
    ...(m.drawn === undefined ? {} : { drawn: m.drawn }),
  });
  const exchange: WebSocketExchangePayload = {
    exchangeId: turn.exchangeId,
    connectionId: turn.connectionId,
    turn: turn.turn,
    url: turn.url,
    kind: turn.kind,
    ...(turn.request === undefined ? {} : { request: turn.request }),
    ...(turn.response === undefined ? {} : { response: turn.response }),
    ...(turn.sent === undefined ? {} : { sent: message(turn.sent) }),
    received: turn.received.map(message),
    ...(turn.closed ? { closed: true } : {}),
    startedAt: new Date(turn.ts).toISOString(),
    durationMs: Math.max(0, turn.end - turn.ts),
    ...(turn.servedFrom === undefined ? {} : { servedFrom: turn.servedFrom }),
  };
  let url: URL;
  try {
    url = new URL(turn.url);
  } catch {
    url = new URL('ws://invalid/');
  }
  const sent = exchange.sent === undefined ? undefined : messageValue(exchange.sent);
  const classified = classifyHttp({ method: 'WS', url, json: sent }, rules);
  const data = exchange.received.filter((m) => m.type === 'text' || m.type === 'binary' || m.type === 'close');
  let received = data.map(messageValue);
  // MCP over a WebSocket: the step's result is the JSON-RPC answer's, as MCP over HTTP's is.
  const request = sent as { id?: unknown } | undefined;
  const answer =
    classified.kind === 'mcp'
      ? (received.find(
          (m) =>
            m !== null &&
            typeof m === 'object' &&
            (m as { id?: unknown }).id === request?.id &&
            ('result' in m || 'error' in m),
        ) as { result?: unknown; error?: unknown } | undefined)
      : undefined;
  if (answer !== undefined) received = [answer.result ?? answer.error];
  const refused = turn.kind === 'open' && (turn.response === undefined || turn.response.status !== 101);
  const failed = refused || turn.servedFrom === 'blocked';
  const isMcpCall = classified.kind === 'mcp' && classified.stateType === 'MCP_CALL';
  const tool: ToolCalledPayload = {
    exchangeId: turn.exchangeId,
    kind: classified.kind === 'mcp' ? 'mcp' : 'websocket',
    name:
      classified.kind === 'mcp' || classified.name !== `WS ${url.pathname}`
        ? classified.name
        : turn.kind === 'message'
          ? `WS ${url.pathname}`
          : `WS ${turn.kind} ${url.pathname}`,
    stateType: classified.stateType,
    args: turn.kind === 'open' ? { url: turn.url } : classified.kind === 'mcp' ? classified.args : (sent ?? null),
    ...(turn.kind === 'open' && turn.response !== undefined
      ? { result: { status: turn.response.status, received } }
      : { result: received.length === 1 ? received[0] : received }),
    ...(failed
      ? {
          error:
            turn.servedFrom === 'blocked'
              ? { code: 'HELD_BACK', message: 'not in the recording: the connection was closed' }
              : {
                  code: turn.response === undefined ? 'NO_RESPONSE' : `HTTP_${turn.response.status}`,
                  message: 'the WebSocket upgrade was refused',
                },
        }
      : {}),
    mutating: classified.mutating || isMcpCall,
    latencyMs: exchange.durationMs,
  };
  const models = (calls?.turn(turn.connectionId, turn.url, wireMessages(turn)) ?? []).map(
    (call): ModelCalledPayload => ({ exchangeId: turn.exchangeId, ...call }),
  );
  if (turn.closed) calls?.close(turn.connectionId);
  return { exchange, tool, failed, models };
}

/** A turn's messages in order, each at its time (ms since the epoch). */
function wireMessages(turn: Turn) {
  const at = (m: TurnMessage) => turn.ts + Math.max(0, m.offsetMs);
  return [
    ...(turn.sent === undefined ? [] : [{ from: 'agent' as const, data: turn.sent.data, atMs: at(turn.sent) }]),
    ...turn.received.map((m) => ({ from: 'server' as const, data: m.data, atMs: at(m) })),
  ];
}

/**
 * The step a turn is. A turn that ends model calls (a Realtime `response.done`, a Gemini Live
 * model turn) is a model step, as an HTTP model call's is: its model.called events and its
 * websocket.exchange, named by its model, THINK when a call decided tools and FINALIZE for an
 * answer, under no parent. Any other turn is its call's step (`isModel` false): its tool.called
 * and websocket.exchange, API_CALL or MCP_CALL.
 */
export function stepOfTurn(step: WebSocketStep): {
  isModel: boolean;
  stateType: StateType;
  name: string;
  events: StepEvent[];
  /** The answer of a model step that decided no tools: the run's final output so far. */
  answer?: string;
} {
  const { exchange, tool, failed, models } = step;
  const last = models.at(-1);
  if (last === undefined)
    return {
      isModel: false,
      stateType: tool.stateType,
      name: tool.name,
      events: [
        { type: 'tool.called', payload: tool },
        { type: 'websocket.exchange', payload: exchange },
      ],
    };
  const toolCalls = models.flatMap((m) => m.output.toolCalls);
  return {
    isModel: true,
    stateType: modelStepType({ output: { toolCalls } }, failed),
    name: last.model || `${last.provider} ${last.api}`,
    events: [
      ...models.map((payload): StepEvent => ({ type: 'model.called', payload })),
      { type: 'websocket.exchange', payload: exchange },
    ],
    ...(!failed && toolCalls.length === 0 && last.output.text !== undefined ? { answer: last.output.text } : {}),
  };
}

/** The turn a capture layer's `ws` message reports (src/record/protocol.ts), its bytes not yet stored. */
export function turnOfMessage(message: MessageOf<'ws'>): Turn {
  const wire = (m: MessageOf<'ws'>['received'][number]): TurnMessage => ({
    type: m.type,
    offsetMs: m.off,
    data: m.data === undefined ? undefined : (m.data.text ?? wireBytes(m.data)),
    code: m.code,
    reason: m.reason,
    drawn: m.drawn,
  });
  return {
    exchangeId: message.id,
    connectionId: message.conn,
    turn: message.turn,
    url: message.url,
    kind: message.kind,
    ts: message.ts,
    end: message.end,
    ...(message.request === undefined ? {} : { request: message.request }),
    ...(message.response === undefined
      ? {}
      : {
          response: {
            status: message.response.status,
            ...(message.response.statusText ? { statusText: message.response.statusText } : {}),
            headers: message.response.headers,
          },
        }),
    sent: message.sent === undefined ? undefined : wire(message.sent),
    received: message.received.map(wire),
    closed: message.closed,
  };
}
