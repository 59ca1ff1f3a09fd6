// replayInProcess(recording, fn): answers fn's HTTP calls (global fetch, node:http/https) in this
// process from a recording, as an exact replay answers an agent process: each call matched layer by
// layer against the recorded calls (the replay's own matcher, CallIndex), the recorded response
// handed back, streamed responses chunk by chunk. A call the recording cannot answer is refused (a
// network error to the caller) and is a divergence; so is a call matched only loosely, and a
// recorded call the run never made. No call leaves the process while fn runs.
// Limits, by design: Date, Math.random and crypto values are the process's own (use fake timers),
// in-process tool() calls run for real, and nothing about the world (files, rows) is checked.
import { isUtf8 } from 'node:buffer';
import { chunkBytes } from '../providers/index.js';
import { activeRuns } from '../record/in-process.js';
import { createRedactor, type Recording, readRecording, TapedeckError } from '../recording/index.js';
import { bodyBytesOf, CallIndex, explainMiss, indexRecording, type RecordedCall } from './match.js';
import { isModelApi, type LiveRequest, redactLive, viewOf } from './normalize.js';
import { redactionKeyDrift, runtimeDrift } from './runtime-drift.js';
import type { VersionChange } from './version-changes.js';

/** What departed from the recording in an in-process replay. */
export interface InProcessDivergence {
  kind: 'unmatched-call' | 'loose-match' | 'missing-call';
  /** `METHOD url` of the live call (unmatched, loose) or of the recorded call (missing). */
  call: string;
  /** The recorded step it was matched to, or expected at. */
  step?: number;
  message: string;
}

export interface InProcessReplayResult<T> {
  /** fn's result, when it returned. */
  result?: T;
  /** What fn threw, when it threw (often a refused call). */
  error?: unknown;
  divergences: InProcessDivergence[];
  /** Calls answered from the recording. */
  served: number;
  /** Calls the recording holds. */
  recorded: number;
  /**
   * What about this process differs from the recorded one and may explain a divergence, as
   * `tapedeck replay` says it: Node's major version, the SDKs' versions, the redaction key.
   */
  warnings: string[];
  /** The packages (SDKs, drivers, clients) at other versions than recorded, when any. */
  versionChanges?: VersionChange[];
}

export interface InProcessReplayOptions {
  /** Recorded calls the run never made are divergences (default true). */
  requireAllCalls?: boolean;
}

const HOP_HEADERS = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive']);

let active = false;

function responseOf(recording: Recording, call: RecordedCall): Response {
  const recorded = call.exchange?.response;
  if (!recorded) return Response.error();
  const headers = new Headers();
  for (const [name, value] of Object.entries(recorded.headers)) {
    if (HOP_HEADERS.has(name.toLowerCase())) continue;
    // Set-Cookie values the recorder kept apart (newline-separated) are separate headers again.
    for (const v of value.split('\n')) headers.append(name, v);
  }
  const status = recorded.status >= 200 && recorded.status <= 599 ? recorded.status : 500;
  const init = { status, headers, ...(recorded.statusText ? { statusText: recorded.statusText } : {}) };
  if ([204, 205, 304].includes(status)) return new Response(null, init);
  if (recorded.chunks) {
    const chunks = recorded.chunks;
    let i = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks[i++];
          if (chunk === undefined) controller.close();
          else controller.enqueue(new Uint8Array(chunkBytes(chunk)));
        },
      }),
      init,
    );
  }
  return new Response(new Uint8Array(bodyBytesOf(recording, recorded.body) ?? Buffer.alloc(0)), init);
}

const label = (call: RecordedCall): string => `${call.request.method} ${call.request.url}`;

/**
 * Runs fn with its HTTP calls answered from the recording at `dir` (or given), and reports what
 * departed from it. One in-process replay at a time, and not while record() is recording here.
 *
 * @example
 * const { result, divergences } = await replayInProcess('recordings/triage-42', () => triage(ticket));
 */
export async function replayInProcess<T>(
  recordingOrDir: Recording | string,
  fn: () => Promise<T> | T,
  options: InProcessReplayOptions = {},
): Promise<InProcessReplayResult<T>> {
  if (active) throw new TapedeckError('REPLAY_BUSY', 'replayInProcess(): another in-process replay is running');
  if (activeRuns() > 0)
    throw new TapedeckError('REPLAY_BUSY', 'replayInProcess(): record() is recording in this process; replay after it');
  const recording = typeof recordingOrDir === 'string' ? await readRecording(recordingOrDir) : recordingOrDir;
  // The recorded HTTP calls (in-process tool() calls are not HTTP: they run for real).
  const index = new CallIndex(indexRecording(recording));
  const redactor = createRedactor();
  // The packages this process resolves from its cwd (or the recorded entry's folder, when here).
  const drift = runtimeDrift(recording, recording.manifest.agent.entry, process.cwd());
  const keyDrift = redactionKeyDrift(redactor.keyId, recording.manifest.redaction.keyId);
  const warnings = [...drift.warnings, ...(keyDrift === undefined ? [] : [keyDrift])];
  const divergences: InProcessDivergence[] = [];
  let served = 0;

  // Loaded here, not at the top: the CLI's replay imports this module and never runs it.
  const [{ BatchInterceptor }, { ClientRequestInterceptor }, { FetchInterceptor }] = await Promise.all([
    import('@mswjs/interceptors'),
    import('@mswjs/interceptors/ClientRequest'),
    import('@mswjs/interceptors/fetch'),
  ]);
  const interceptor = new BatchInterceptor({
    name: 'tapedeck-replay-in-process',
    interceptors: [new ClientRequestInterceptor(), new FetchInterceptor()],
  });
  interceptor.on('request', async ({ request, controller }) => {
    const bytes =
      request.body !== null && request.method !== 'GET' && request.method !== 'HEAD'
        ? Buffer.from(await request.clone().arrayBuffer())
        : undefined;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // Compared as the recording stores requests: with their secrets redacted (bytes as bytes).
    const text = bytes !== undefined && isUtf8(bytes) ? bytes.toString('utf8') : undefined;
    const live: LiveRequest = redactLive(
      redactor,
      {
        method: request.method.toUpperCase(),
        url: request.url,
        headers,
        ...(text !== undefined ? { bodyText: text } : {}),
      },
      bytes,
    );
    const isModel = isModelApi(viewOf(live).api);
    const m = index.match(live, isModel ? { kind: 'model', maxLayer: 'normalised' } : { allowReuse: true });
    const what = `${request.method} ${request.url}`;
    if (!m.call) {
      const message = `${what}: not in the recording (${explainMiss(live, m)})`;
      divergences.push({
        kind: 'unmatched-call',
        call: what,
        ...(m.nearest ? { step: m.nearest.step } : {}),
        message,
      });
      controller.errorWith(new TypeError(`tapedeck replay: ${message}`));
      return;
    }
    if (m.layer === 'structural' || m.reused) {
      divergences.push({
        kind: 'loose-match',
        call: what,
        step: m.call.step,
        message: `${what}: matched recorded step ${m.call.step} only ${m.reused ? 'as a repeat' : 'structurally'} (${m.fieldDiff
          .slice(0, 3)
          .map((d) => d.path)
          .join(', ')})`,
      });
    }
    index.markUsed(m.call);
    served++;
    controller.respondWith(responseOf(recording, m.call));
  });

  active = true;
  interceptor.apply();
  const out: InProcessReplayResult<T> = {
    divergences,
    served: 0,
    recorded: index.calls.length,
    warnings,
    ...(drift.versionChanges.length > 0 ? { versionChanges: drift.versionChanges } : {}),
  };
  try {
    out.result = await fn();
  } catch (error) {
    out.error = error;
  } finally {
    interceptor.dispose();
    active = false;
  }
  out.served = served;
  if (options.requireAllCalls !== false) {
    for (const call of index.unused()) {
      divergences.push({
        kind: 'missing-call',
        call: label(call),
        step: call.step,
        message: `recorded step ${call.step} (${call.stepName}): ${label(call)} was not made`,
      });
    }
  }
  return out;
}
