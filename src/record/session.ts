// The recording session: turns the capture layer's messages into a Recording. It pairs requests
// with responses, decodes LLM protocols into model.called, classifies other calls as tools,
// segments the run into steps, and attributes world changes and nondeterministic values to the
// step during which they happened. Messages are handled strictly in arrival order. What an
// exchange becomes is exchange-step.ts's, a WebSocket turn websocket.ts's; writing the steps
// (numbered, named, observed) and looking at the world's changes is step-log.ts's.
import { ND_KINDS } from '../../sandbox/protocol.js';
import { ConversationCalls, detectProvider } from '../providers/index.js';
import {
  agentToolStep,
  ConnectionAccount,
  MAX_LINE_BYTES,
  type NondeterminismPayload,
  type RecordingWriter,
  type SeenConnection,
  type StepEvent,
  type ToolCallAccount,
  type ToolCalledPayload,
  UnhookedAccount,
  UnwatchedAccount,
} from '../recording/index.js';
import { agentToolCall, stdioRpcCall, type ToolRule } from './classify.js';
import { iso, modelCallOf, type OpenExchange, readExchange, type StoreBody, toolCallOf } from './exchange-step.js';
import { type CaptureMessage, CaptureMessageSchema, type MessageOf } from './protocol.js';
import { type RecordedEvent, StepLog, type WorldLook, type WorldSource } from './step-log.js';
import { stepOfTurn, turnOfMessage, websocketStep } from './websocket.js';

export type { RecordedEvent, WorldSource } from './step-log.js';

export interface SessionOptions {
  world?: WorldSource;
  rules?: readonly ToolRule[];
  /** Called after each event is appended; awaited (the agent waits at the next step boundary). */
  onEvent?: (event: RecordedEvent) => void | Promise<void>;
  /** Tool results (parsed JSON) larger than this many bytes go to resultBody instead of result. */
  maxInlineResult?: number;
  /** Which reported connections the run's world capture records after all (its database): not named as unrecorded. */
  recordedConnection?: (connection: SeenConnection) => boolean;
  /** A streamed answer's chunks are kept up to this many bytes (`maxBodyBytes`), then cut; default: what one event may hold. */
  maxStreamBytes?: number;
}

/**
 * How much of a stream's chunks one http.exchange keeps when no cap is given: their JSON text
 * within half of what a reader takes of a line (MAX_LINE_BYTES), the rest of the event beside it.
 */
const STREAM_KEEP_BYTES = MAX_LINE_BYTES / 2;
/** What a chunk's JSON costs beside its data (`{"data":"","offsetMs":1234.5678}`). */
const CHUNK_OVERHEAD = 48;

export class RecordSession {
  /** The steps written, numbered and named, and the world's changes looked at. */
  private readonly log: StepLog;
  private finalOutput: string | undefined;
  /** The model calls of the run's WebSocket conversations, decoded turn by turn. */
  private readonly conversations = new ConversationCalls();
  private readonly open = new Map<string, OpenExchange>();
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;
  /** What the answer to a `start` barrier waits for. */
  private started: Promise<void> = Promise.resolve();
  /** Tool calls the model decided that no step carried out: said when the recording closes. */
  readonly toolCalls: ToolCallAccount;
  /** Connections the run opened that no capture layer records: in the manifest, and said. */
  readonly connections: ConnectionAccount;
  /** Python programs started without tapedeck's hook (their values unrecorded): in the manifest, and said. */
  readonly unhooked = new UnhookedAccount();
  /** Programs the run started that reach a network service unseen (curl, psql), as the preloads report them. */
  readonly unwatched = new UnwatchedAccount();

  constructor(
    private readonly writer: RecordingWriter,
    private readonly options: SessionOptions = {},
  ) {
    this.connections = new ConnectionAccount(options.recordedConnection);
    this.log = new StepLog(writer, options.world, options.onEvent);
    this.toolCalls = this.log.toolCalls;
  }

  /** The parent of the tool steps that follow: the last model step that decided tool calls. */
  private get lastThink(): number | undefined {
    return this.log.lastThink;
  }

  /** Holds the answer to the agent's `start` barrier until `until` settles (the world's first snapshot taken). */
  holdStart(until: Promise<void>): void {
    this.started = until.then(
      () => {},
      () => {},
    );
  }

  /** The number of steps recorded so far. */
  get steps(): number {
    return this.log.count;
  }

  get lastOutput(): string | undefined {
    return this.finalOutput;
  }

  /**
   * Queues one message (raw JSON value, or a function that builds it when its turn comes);
   * `reply` is called once it and everything before it is handled.
   */
  accept(raw: unknown, reply?: (answer: { ack: number }) => void): void {
    this.chain = this.chain.then(async () => {
      let value: unknown;
      try {
        value = typeof raw === 'function' ? raw() : raw;
      } catch {
        return;
      }
      const parsed = CaptureMessageSchema.safeParse(value);
      if (!parsed.success) return;
      try {
        await this.handle(parsed.data);
      } catch (error) {
        this.failure ??= error;
      }
      if (parsed.data.t === 'sync') reply?.({ ack: parsed.data.n });
    });
  }

  /** Resolves when every queued message is handled; rethrows the first handling error. */
  async idle(): Promise<void> {
    await this.chain;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Drains the world after the last step (as its own step if anything changed). */
  async finish(): Promise<void> {
    await this.idle();
    await this.log.drainBetweenSteps();
  }

  /**
   * Whether a stream's next chunk is kept: a stream past the cap (`maxBodyBytes` of its bytes, else
   * what one event may hold of its chunks' JSON) keeps its first chunks and is marked cut, so its
   * recording stays readable (a line past MAX_LINE_BYTES would make the whole file refused).
   */
  private keepChunk(open: OpenExchange, data: string, base64: boolean): boolean {
    const streamed = (open.streamed ??= { kept: 0, total: 0, cut: false });
    const bytes = base64 ? Math.floor((data.length * 3) / 4) : Buffer.byteLength(data);
    streamed.total += bytes;
    if (streamed.cut) return false;
    const cap = this.options.maxStreamBytes;
    const cost = cap !== undefined && cap >= 0 ? bytes : Buffer.byteLength(JSON.stringify(data)) + CHUNK_OVERHEAD;
    if (streamed.kept + cost > (cap !== undefined && cap >= 0 ? cap : STREAM_KEEP_BYTES)) {
      streamed.cut = true;
      return false;
    }
    streamed.kept += cost;
    return true;
  }

  private async handle(message: CaptureMessage): Promise<void> {
    switch (message.t) {
      case 'hello':
        // A variable its parent set for it alone (a tool's token): its secrets are known from now on.
        if (message.env) this.writer.redactor.learnEnv(message.env);
        return;
      case 'req':
        this.open.set(message.id, { req: message, chunks: [], parentThink: this.lastThink, nd: [] });
        return;
      case 'res': {
        const open = this.open.get(message.id);
        if (open === undefined) return;
        open.res = message;
        if (message.stream !== true)
          await this.completeExchange(open, message.end ?? message.ts, message.error, message);
        return;
      }
      case 'xchg': {
        const { res, end, error, quiet, files, busy, drawn, t: _t, ...req } = message;
        const open: OpenExchange = {
          req: { t: 'req', ...req },
          chunks: [],
          parentThink: this.lastThink,
          nd: [],
          drawn,
          trailers: res?.trailers,
          ...(res === undefined ? {} : { res: { t: 'res', id: req.id, ...res } }),
        };
        this.open.set(req.id, open);
        await this.completeExchange(open, end, error, { quiet, files, busy });
        return;
      }
      case 'chunk': {
        const open = this.open.get(message.id);
        if (open === undefined || !this.keepChunk(open, message.data, message.encoding === 'base64')) return;
        open.chunks.push({
          offsetMs: Math.max(0, message.off),
          data: message.data,
          ...(message.encoding === undefined ? {} : { encoding: message.encoding }),
        });
        return;
      }
      case 'end': {
        const open = this.open.get(message.id);
        if (open !== undefined && message.trailers !== undefined) open.trailers = message.trailers;
        if (open !== undefined) await this.completeExchange(open, message.ts, message.error, message);
        return;
      }
      case 'tool':
        await this.completeTool(message);
        return;
      case 'rpc':
        await this.completeRpc(message);
        return;
      case 'ws':
        await this.completeWebSocketTurn(message);
        return;
      case 'socket': {
        const { t: _t, pid: _pid, ts: _ts, ...connection } = message;
        this.connections.see(connection);
        return;
      }
      case 'unhooked': {
        const { t: _t, pid: _pid, ...found } = message;
        this.unhooked.see(found);
        return;
      }
      case 'unwatched':
        this.unwatched.see(message);
        return;
      case 'nd':
        await this.nondeterminism(message);
        return;
      case 'sync':
        if (message.reason === 'req') await this.log.drainBetweenSteps(message.busy);
        else if (message.reason === 'start') await this.started;
        return;
      case 'files':
        // What changed before a call, read at its opening boundary by the agent's process.
        await this.log.writeChanges(await this.log.worldChanges(message), message.ts);
        return;
      case 'db':
        await this.log.writeChanges(
          message.changes.map((payload): StepEvent => ({ type: 'db.changed', payload })),
          message.ts,
        );
        return;
    }
  }

  private async nondeterminism(message: MessageOf<'nd'>): Promise<void> {
    const payloads: NondeterminismPayload[] = [];
    for (const kind of ND_KINDS) {
      const values = message.batches[kind];
      if (values !== undefined && values.length > 0)
        payloads.push({
          kind,
          values,
          ...(message.batches.process !== undefined ? { process: message.batches.process } : {}),
        });
    }
    // Values read while a call is in flight belong to that call's step; others to the last step.
    let latest: OpenExchange | undefined;
    for (const open of this.open.values()) if (open.req.pid === message.pid) latest = open;
    // A replay hands values back in recorded order: while a call still in flight (a long-lived
    // stream) holds earlier values, later ones join it rather than a call that completes sooner.
    for (const open of this.open.values()) if (open.nd.length > 0) latest = open;
    if (latest !== undefined) {
      latest.nd.push(...payloads);
      return;
    }
    for (const payload of payloads) {
      await this.log.emit({ type: 'nondeterminism', stepId: this.log.count, time: iso(message.ts), payload });
    }
  }

  /**
   * `at.quiet`: the agent saw no world change during the call (but `at.files`, which it read
   * itself) and did not wait: nothing is drained for it.
   */
  private async completeExchange(
    open: OpenExchange,
    end: number,
    error: { code: string; message: string } | undefined,
    at: WorldLook = {},
  ): Promise<void> {
    const { files } = at;
    this.open.delete(open.req.id);
    const store: StoreBody = (data, contentType) => this.writer.body(data, contentType);
    // The secrets its headers name (Authorization, Set-Cookie) are known before its bodies are
    // stored: a large body goes to a blob now, where a later pass could not reach it.
    this.writer.redactor.headers(open.req.headers);
    if (open.res) this.writer.redactor.headers(open.res.headers);
    const read = readExchange(open, end, error, store);
    const { req } = open;
    const { exchange, failed, errorType, nd } = read;

    const provider = detectProvider(read.call);
    if (provider !== undefined) {
      const { model, stateType } = modelCallOf(provider, read);
      if (!failed && model.output.text !== undefined) this.finalOutput = model.output.text;
      // A model call does not change the world: changes seen now were made after it (the agent
      // acting on a stream it has finished reading) and belong to the next step.
      const events: StepEvent[] = [
        { type: 'model.called', payload: model },
        { type: 'http.exchange', payload: exchange },
        ...nd,
      ];
      await this.log.write({
        stateType,
        name: model.model || `${model.provider} ${model.api}`,
        start: req.ts,
        end,
        events,
        status: failed ? 'error' : 'success',
        errorType,
      });
      // Files the agent read at the call's end: a step of their own after it, as the next
      // boundary's drain would make (the tracker would otherwise leave them to a later drain).
      if (files !== undefined) await this.log.writeChanges(await this.log.worldChanges({ files, quiet: true }), end);
      return;
    }

    const payload = toolCallOf(read, error, this.options.rules, this.options.maxInlineResult ?? 65536, store);
    await this.log.write({
      stateType: payload.stateType,
      name: payload.name,
      parentStepId: open.parentThink,
      start: req.ts,
      end,
      events: [
        { type: 'tool.called', payload },
        { type: 'http.exchange', payload: exchange },
        ...(await this.log.worldChanges(at)),
        ...nd,
      ],
      status: failed ? 'error' : 'success',
      errorType,
    });
  }

  private async completeTool(message: MessageOf<'tool'>): Promise<void> {
    const payload = agentToolCall(message, (text) => this.writer.body(text, 'application/json'));
    await this.writeToolStep(payload, message, [
      ...(message.db ?? []).map((change): StepEvent => ({ type: 'db.changed', payload: change })),
      ...(await this.log.worldChanges(message)),
    ]);
  }

  /** A request over a child's stdio and its answer (MCP over stdio): a step of kind `mcp`, no exchange. */
  private async completeRpc(message: MessageOf<'rpc'>): Promise<void> {
    const payload = stdioRpcCall(
      message,
      this.options.rules ?? [],
      (json) => this.writer.body(json, 'application/json'),
      this.options.maxInlineResult,
    );
    await this.writeToolStep(payload, message, await this.log.worldChanges(message));
  }

  /**
   * A turn of a WebSocket conversation (its open, or a message the agent sent, with the server's
   * messages until the next): an API_CALL step (MCP_CALL for a JSON-RPC tools/call) under the last
   * THINK step, or a model step when it ends model calls of a model API spoken over it (OpenAI
   * Realtime, Gemini Live: src/providers/conversation.ts). It leaves the world's changes to the
   * next step: it is written only when its connection's next turn starts.
   */
  private async completeWebSocketTurn(message: MessageOf<'ws'>): Promise<void> {
    const turn = websocketStep(
      turnOfMessage(message),
      (data) => this.writer.body(typeof data === 'string' ? data : Buffer.from(data)),
      this.options.rules,
      this.conversations,
    );
    const step = stepOfTurn(turn);
    if (step.answer !== undefined) this.finalOutput = step.answer;
    await this.log.write({
      stateType: step.stateType,
      name: step.name,
      ...(step.isModel ? {} : { parentStepId: this.lastThink }),
      start: message.ts,
      end: message.end,
      events: step.events,
      status: turn.failed ? 'error' : 'success',
      errorType: turn.tool.error?.code,
    });
  }

  /** A tool step of the agent's own (a tool() or file call, a request over stdio) under its THINK step. */
  private async writeToolStep(
    payload: ToolCalledPayload,
    at: { ts: number; end: number },
    effects: StepEvent[],
  ): Promise<void> {
    await this.log.write({ ...agentToolStep(payload, at, effects), parentStepId: this.lastThink });
  }
}
