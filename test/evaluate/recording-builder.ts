// Builds in-memory Recordings in the shape the recorder writes (schema.ts), for the scoring engines' tests.
// Used until/alongside the committed example recordings; every event is validated against the schema.
import { createHash } from 'node:crypto';
import {
  type DbSnapshot,
  EventEnvelopeSchema,
  type FileEntry,
  FORMAT,
  type FsSnapshot,
  type Manifest,
  PAYLOAD_SCHEMAS,
  type Recording,
  type RecordingEvent,
  type Row,
  type StateType,
  type ToolCall,
  type Usage,
} from '../../src/recording/index.js';

export interface ToolSpec {
  name: string;
  stateType?: StateType;
  args: unknown;
  result?: unknown;
  mutating?: boolean;
  /** When set, the tool is an HTTP call with this exchange. */
  http?: {
    method: string;
    url: string;
    status?: number;
    body?: unknown;
    servedFrom?: 'recording' | 'live' | 'blocked';
  };
  error?: { code: string; message: string };
  fs?: Array<{ path: string; op: 'create' | 'modify' | 'delete'; content?: string }>;
  db?: Array<{
    schema?: string;
    table: string;
    op: 'insert' | 'update' | 'delete';
    key: Row;
    before?: Row;
    after?: Row;
  }>;
}

export class RecordingBuilder {
  readonly events: RecordingEvent[] = [];
  readonly blobs = new Map<string, Buffer>();
  pre: { fs?: FsSnapshot; db?: DbSnapshot } = {};
  post: { fs?: FsSnapshot; db?: DbSnapshot } = {};
  private step = 0;
  private exchanges = 0;
  private clock = Date.parse('2026-11-24T10:00:00.000Z');
  manifestPatch: Partial<Manifest> = {};

  constructor(
    readonly id = 'rec-test',
    readonly traceId = 'trace-test',
  ) {
    this.append('run.started', 0, undefined, { command: ['node', 'agent.mjs'], cwd: '/tmp' });
  }

  /** A file entry whose bytes are stored as a blob. */
  file(content: string | Buffer, mode = 0o644): FileEntry {
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    this.blobs.set(sha256, bytes);
    return { mode, size: bytes.length, sha256 };
  }

  append(type: RecordingEvent['type'], stepId: number, parentStepId: number | undefined, payload: unknown): void {
    const event = {
      seq: this.events.length,
      traceId: this.traceId,
      stepId,
      ...(parentStepId !== undefined ? { parentStepId } : {}),
      type,
      time: new Date((this.clock += 7)).toISOString(),
      payload,
    };
    EventEnvelopeSchema.parse(event);
    PAYLOAD_SCHEMAS[type].parse(payload);
    this.events.push(event as RecordingEvent);
  }

  /** A model call step: THINK when it asks for tools, FINALIZE otherwise. Returns its step id. */
  model(options: {
    messages: unknown[];
    system?: string;
    text?: string;
    toolCalls?: Array<{ name: string; arguments: unknown; id?: string }>;
    usage?: Partial<Usage>;
    tools?: unknown[];
    model?: string;
  }): number {
    const stepId = ++this.step;
    const toolCalls: ToolCall[] = (options.toolCalls ?? []).map((t, i) => ({
      id: t.id ?? `call_${stepId}_${i}`,
      name: t.name,
      arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments),
    }));
    const stateType = toolCalls.length > 0 ? 'THINK' : 'FINALIZE';
    this.append('step.started', stepId, undefined, { stateType, name: options.model ?? 'fake-model' });
    const exchangeId = `x${++this.exchanges}`;
    this.append('http.exchange', stepId, undefined, {
      exchangeId,
      request: { method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', headers: {} },
      response: { status: 200, headers: {} },
      startedAt: new Date(this.clock).toISOString(),
      durationMs: 5,
    });
    this.append('model.called', stepId, undefined, {
      exchangeId,
      provider: 'openai',
      api: 'chat.completions',
      model: options.model ?? 'fake-model',
      streamed: false,
      ...(options.system !== undefined ? { system: options.system } : {}),
      messages: options.messages,
      ...(options.tools ? { tools: options.tools } : {}),
      output: { ...(options.text !== undefined ? { text: options.text } : {}), toolCalls },
      stopReason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      usage: { inputUncached: 100, cacheRead: 0, cacheWrite: 0, output: 20, reasoning: 0, ...options.usage },
      latencyMs: 5,
    });
    this.append('step.completed', stepId, undefined, { status: 'success', latencyMs: 5 });
    return stepId;
  }

  /** A tool step requested by `parent`. Returns its step id. */
  tool(parent: number, spec: ToolSpec): number {
    const stepId = ++this.step;
    this.append('step.started', stepId, parent, { stateType: spec.stateType ?? 'API_CALL', name: spec.name });
    let exchangeId: string | undefined;
    if (spec.http) {
      exchangeId = `x${++this.exchanges}`;
      const body = spec.http.body === undefined ? undefined : JSON.stringify(spec.http.body);
      const resultText = spec.result === undefined ? undefined : JSON.stringify(spec.result);
      this.append('http.exchange', stepId, parent, {
        exchangeId,
        request: {
          method: spec.http.method,
          url: spec.http.url,
          headers: {},
          ...(body !== undefined
            ? { body: { size: Buffer.byteLength(body), contentType: 'application/json', text: body } }
            : {}),
        },
        ...(spec.http.servedFrom === 'blocked'
          ? { error: { code: 'BLOCKED', message: 'blocked in replay' } }
          : {
              response: {
                status: spec.http.status ?? 200,
                headers: {},
                ...(resultText !== undefined
                  ? { body: { size: Buffer.byteLength(resultText), text: resultText } }
                  : {}),
              },
            }),
        startedAt: new Date(this.clock).toISOString(),
        durationMs: 3,
        ...(spec.http.servedFrom ? { servedFrom: spec.http.servedFrom } : {}),
      });
    }
    this.append('tool.called', stepId, parent, {
      ...(exchangeId ? { exchangeId } : {}),
      kind: spec.http ? 'http' : 'in-process',
      name: spec.name,
      stateType: spec.stateType ?? 'API_CALL',
      args: spec.args,
      ...(spec.result !== undefined ? { result: spec.result } : {}),
      ...(spec.error ? { error: spec.error } : {}),
      mutating: spec.mutating ?? false,
      latencyMs: 3,
    });
    this.worldEvents(stepId, parent, spec);
    this.append('step.completed', stepId, parent, { status: spec.error ? 'error' : 'success', latencyMs: 3 });
    return stepId;
  }

  /**
   * A step that only changed the world, as the recorder writes an agent tool that writes through its
   * own database client (`database changes`, DB_QUERY) or files: no tool.called, linked to the decided
   * call by `toolCallId` when the recorder linked it. Returns its step id.
   */
  changes(
    parent: number,
    spec: Pick<ToolSpec, 'fs' | 'db'> & {
      name?: string;
      stateType?: StateType;
      toolCallName?: string;
      toolCallId?: string;
    },
  ): number {
    const stepId = ++this.step;
    const name = spec.toolCallName ?? spec.name ?? 'database changes';
    const linked =
      spec.toolCallId !== undefined ? { toolCallId: spec.toolCallId, route: spec.name ?? 'database changes' } : {};
    this.append('step.started', stepId, parent, { stateType: spec.stateType ?? 'DB_QUERY', name, ...linked });
    this.worldEvents(stepId, parent, spec);
    this.append('step.completed', stepId, parent, { status: 'success', latencyMs: 0 });
    return stepId;
  }

  private worldEvents(stepId: number, parent: number, spec: Pick<ToolSpec, 'fs' | 'db'>): void {
    for (const f of spec.fs ?? []) {
      const before = this.currentFile(f.path);
      const after = f.op === 'delete' ? undefined : this.file(f.content ?? '');
      this.append('fs.changed', stepId, parent, {
        path: f.path,
        op: f.op,
        ...(before ? { before } : {}),
        ...(after ? { after } : {}),
      });
    }
    for (const d of spec.db ?? []) {
      this.append('db.changed', stepId, parent, {
        schema: d.schema ?? 'public',
        table: d.table,
        op: d.op,
        key: d.key,
        ...(d.before ? { before: d.before } : {}),
        ...(d.after ? { after: d.after } : {}),
      });
    }
  }

  /** A held-back side effect in a replay. */
  heldBack(stepId: number, method: string, target: string, body?: unknown): void {
    this.append('divergence', stepId, undefined, {
      kind: 'unmatched-request',
      message: `${method} ${target} did not match the recording; held back`,
      heldBack: { method, target, ...(body !== undefined ? { body } : {}) },
    });
  }

  private currentFile(path: string): FileEntry | undefined {
    let entry = this.pre.fs?.files[path];
    for (const e of this.events) {
      if (e.type === 'fs.changed' && e.payload.path === path) entry = e.payload.after;
    }
    return entry;
  }

  complete(finalOutput?: string, status: 'complete' | 'failed' = 'complete'): this {
    this.append('run.completed', 0, undefined, {
      status,
      exitCode: status === 'complete' ? 0 : 1,
      ...(finalOutput !== undefined ? { finalOutput } : {}),
    });
    return this;
  }

  build(): Recording {
    const manifest: Manifest = {
      format: FORMAT,
      id: this.id,
      name: this.id,
      createdAt: '2026-11-24T10:00:00.000Z',
      status: 'complete',
      agent: { command: ['node', 'agent.mjs'], cwd: '/tmp' },
      runtime: { node: process.version, platform: process.platform, sdkVersions: {} },
      redaction: { rules: [], keyId: 'test' },
      integrity: { events: this.events.length },
      ...this.manifestPatch,
    };
    const blobs = this.blobs;
    return {
      dir: `/tmp/${this.id}`,
      manifest,
      events: this.events,
      pre: this.pre,
      post: this.post,
      readBlob(sha256: string): Buffer {
        const b = blobs.get(sha256);
        if (!b) throw new Error(`blob ${sha256} not found`);
        return b;
      },
      warnings: [],
    };
  }
}

/**
 * A run that asks, reads one tool result over HTTP (`GET <path>`) and answers: the shape of the
 * claim tests, whose answer is held against what that result shows.
 */
export function readThenAnswer(options: { user: string; path: string; result: unknown; answer: string }): Recording {
  const { user, path, result, answer } = options;
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: user }];
  const read = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'q', name: `get_${path.split('/')[1]}`, arguments: {} }],
  });
  b.tool(read, { name: `GET ${path}`, args: {}, result, http: { method: 'GET', url: `http://127.0.0.1:1${path}` } });
  messages.push({ role: 'tool', tool_call_id: 'q', content: JSON.stringify(result) });
  b.model({ messages: [...messages], text: answer });
  return b.complete(answer).build();
}
