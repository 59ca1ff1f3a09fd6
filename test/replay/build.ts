// Writes small recordings with the recording writer, for matcher and hostile-input tests that
// need no agent world: each call is one step with its http.exchange.
import { createRecordingWriter, type DbSnapshot, type StateType, type StreamChunk } from '../../src/recording/index.js';

export interface CallSpec {
  kind: 'model' | 'tool';
  method?: string;
  url: string;
  body?: unknown;
  status?: number;
  response?: unknown;
  chunks?: StreamChunk[];
  stateType?: StateType;
  name?: string;
  durationMs?: number;
  files?: Array<{ path: string; content: string }>;
}

export interface RecordingSpec {
  command?: string[];
  cwd?: string;
  calls: CallSpec[];
  fsRoot?: string;
  files?: Record<string, string>;
  db?: DbSnapshot;
  /** The database URL the run was recorded against (default postgres://localhost/built). */
  dbUrl?: string;
  /** Return values of Date.now, Math.random and crypto.randomUUID handed to the agent. */
  nondeterminism?: { clock?: number[]; random?: number[]; uuid?: string[] };
}

export async function writeRecording(dir: string, spec: RecordingSpec): Promise<string> {
  const writer = await createRecordingWriter(dir, {
    name: 'built',
    agent: { command: spec.command ?? [process.execPath, '-e', ''], cwd: spec.cwd ?? process.cwd() },
    ...(spec.fsRoot || spec.db
      ? {
          world: {
            ...(spec.fsRoot ? { fsRoot: spec.fsRoot } : {}),
            ...(spec.db
              ? {
                  db: {
                    url: spec.dbUrl ?? 'postgres://localhost/built',
                    schemas: spec.db.schemas,
                    env: 'DATABASE_URL',
                  },
                }
              : {}),
          },
        }
      : {}),
  });
  const files: Record<string, { mode: number; size: number; sha256: string }> = {};
  for (const [p, content] of Object.entries(spec.files ?? {})) {
    const bytes = Buffer.from(content);
    files[p] = { mode: 0o644, size: bytes.length, sha256: writer.putBlob(bytes) };
  }
  writer.writeSnapshot('pre', {
    ...(spec.fsRoot ? { fs: { files } } : {}),
    ...(spec.db ? { db: spec.db } : {}),
  });
  writer.append({
    type: 'run.started',
    stepId: 0,
    payload: { command: writer.manifest.agent.command, cwd: process.cwd() },
  });
  const nd = spec.nondeterminism ?? {};
  for (const kind of ['clock', 'random', 'uuid'] as const) {
    const values = nd[kind];
    if (values) writer.append({ type: 'nondeterminism', stepId: 0, payload: { kind, values } });
  }
  let step = 0;
  for (const call of spec.calls) {
    step++;
    const exchangeId = `x${step}`;
    const method = call.method ?? (call.body === undefined ? 'GET' : 'POST');
    const stateType = call.stateType ?? (call.kind === 'model' ? 'THINK' : 'API_CALL');
    const name = call.name ?? (call.kind === 'model' ? 'model' : `${method} ${new URL(call.url).pathname}`);
    writer.append({ type: 'step.started', stepId: step, payload: { stateType, name } });
    if (call.kind === 'model') {
      writer.append({
        type: 'model.called',
        stepId: step,
        payload: {
          exchangeId,
          provider: 'openai',
          api: 'chat.completions',
          model: 'gpt-test',
          streamed: call.chunks !== undefined,
          messages: [],
          output: { text: 'ok', toolCalls: [] },
          latencyMs: call.durationMs ?? 1,
        },
      });
    } else {
      writer.append({
        type: 'tool.called',
        stepId: step,
        payload: {
          exchangeId,
          kind: 'http',
          name,
          stateType,
          args: call.body ?? {},
          mutating: method !== 'GET',
          latencyMs: call.durationMs ?? 1,
        },
      });
    }
    const responseText = call.response === undefined ? '' : JSON.stringify(call.response);
    writer.append({
      type: 'http.exchange',
      stepId: step,
      payload: {
        exchangeId,
        request: {
          method,
          url: call.url,
          headers: { 'content-type': 'application/json' },
          ...(call.body === undefined ? {} : { body: writer.body(JSON.stringify(call.body), 'application/json') }),
        },
        response: {
          status: call.status ?? 200,
          headers: { 'content-type': call.chunks ? 'text/event-stream' : 'application/json' },
          ...(call.chunks
            ? { chunks: call.chunks, body: writer.body(call.chunks.map((c) => c.data).join(''), 'text/event-stream') }
            : responseText
              ? { body: writer.body(responseText, 'application/json') }
              : {}),
        },
        startedAt: new Date(Date.UTC(2026, 10, 24, 12, 0, step)).toISOString(),
        durationMs: call.durationMs ?? 1,
      },
    });
    for (const f of call.files ?? []) {
      const bytes = Buffer.from(f.content);
      const after = { mode: 0o644, size: bytes.length, sha256: writer.putBlob(bytes) };
      const before = files[f.path];
      writer.append({
        type: 'fs.changed',
        stepId: step,
        payload: { path: f.path, op: before ? 'modify' : 'create', ...(before ? { before } : {}), after },
      });
      files[f.path] = after;
    }
    writer.append({
      type: 'step.completed',
      stepId: step,
      payload: { status: 'success', latencyMs: call.durationMs ?? 1 },
    });
  }
  writer.writeSnapshot('post', { ...(spec.fsRoot ? { fs: { files } } : {}), ...(spec.db ? { db: spec.db } : {}) });
  writer.append({ type: 'run.completed', stepId: 0, payload: { status: 'complete', exitCode: 0 } });
  await writer.close('complete');
  return dir;
}
