// HTTP side effects of a run: the mutating requests it made (tool.called mutating, bare mutating exchanges)
// and, in a replay, the ones held back (divergence.heldBack), each with target, parameters and step.
import {
  type Body,
  callServedFrom,
  exchangesServed,
  type HttpExchangePayload,
  isHeldBack,
  isReadRequest,
  isRecord,
  isTelemetry,
  jsonOrText,
  type RecordingEvent,
  stepNames,
} from '../recording/index.js';
import { decodeText } from './fs-diff.js';
import { toolCallFailure } from './tool-failure.js';
import type { HttpEffect } from './types.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Text of a body (inline text, base64 or blob); undefined when unreadable or binary. */
export function bodyText(body: Body | undefined, readBlob?: (sha256: string) => Uint8Array): string | undefined {
  if (!body) return undefined;
  if (body.text !== undefined) return body.text;
  if (body.base64 !== undefined) return decodeText(Buffer.from(body.base64, 'base64')) ?? undefined;
  if (body.blob !== undefined && readBlob) {
    try {
      return decodeText(readBlob(body.blob)) ?? undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * Whether a request the run sent (or an execution eval counts) succeeded: sent, not held back,
 * answered below 400, with no error (a 503 retried is not one). One rule for state-diff and eval.
 */
export function requestSucceeded(x: Pick<HttpEffect, 'heldBack' | 'error' | 'status'>): boolean {
  return !x.heldBack && x.error === undefined && (x.status === undefined || x.status < 400);
}

/** The path of an effect's target (a URL, or a path already): what routes and keys name it by. */
export function targetPath(target: string): string {
  try {
    return new URL(target, 'http://localhost').pathname;
  } catch {
    return target;
  }
}

/** Query parameters, JSON body fields and tool arguments, merged into one flat-ish object. */
export function effectParameters(url: string | undefined, body: unknown, args: unknown): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  if (url) {
    try {
      for (const [k, v] of new URL(url, 'http://localhost').searchParams) params[k] = v;
    } catch {
      // not a URL: no query parameters
    }
  }
  const bodyValue = typeof body === 'string' ? jsonOrText(body) : body;
  if (isRecord(bodyValue)) Object.assign(params, bodyValue);
  if (isRecord(args)) {
    for (const [k, v] of Object.entries(args)) {
      if (k === 'body' || k === 'json' || k === 'data') {
        const inner = typeof v === 'string' ? jsonOrText(v) : v;
        if (isRecord(inner)) Object.assign(params, inner);
        else params[k] = v;
      } else if (k !== 'headers' && k !== 'method' && k !== 'url' && !(k in params)) params[k] = v;
    }
  }
  return params;
}

/**
 * The mutating requests of a recording in event order, attributed to their steps.
 * Requests answered by a model endpoint (referenced by model.called) are never side effects.
 * `reads`: the requests that only read too (marked `read`), as a contract's request expectations
 * name them ("the agent looked up the order"); a tracer's exports are never among them.
 */
export function collectHttpEffects(
  events: readonly RecordingEvent[],
  readBlob?: (sha256: string) => Uint8Array,
  options: { reads?: boolean } = {},
): HttpEffect[] {
  const reads = options.reads === true;
  const exchanges = new Map<string, HttpExchangePayload>();
  const claimed = new Set<string>();
  /** Steps whose tool.called says the call only reads (a held-back GET, an MCP tools/list). */
  const readSteps = new Set<number>();
  const heldBackSteps = new Set<number>();
  for (const e of events) {
    if (e.type === 'http.exchange') exchanges.set(e.payload.exchangeId, e.payload);
    else if ((e.type === 'model.called' || e.type === 'tool.called') && e.payload.exchangeId)
      claimed.add(e.payload.exchangeId);
    if (e.type === 'tool.called' && !e.payload.mutating) readSteps.add(e.stepId);
    if (e.type === 'divergence' && e.payload.heldBack) heldBackSteps.add(e.stepId);
  }
  const effects: HttpEffect[] = [];
  let effectCount = 0;
  let readCount = 0;
  const names = stepNames(events);
  const servedOf = exchangesServed(events);
  const add = (e: Omit<HttpEffect, 'index' | 'kind' | 'steps'>) => {
    // Named after the agent's tool the step carried out, the capture layer's name kept as route.
    const named = e.stepId === null ? undefined : names.get(e.stepId);
    const effect: HttpEffect = {
      kind: 'request',
      // Reads are numbered apart, so a mutating request has the same number with or without them.
      index: e.read === true ? ++readCount : ++effectCount,
      steps: e.stepId === null ? [] : [e.stepId],
      ...e,
    };
    if (named !== undefined && named.toolCallId !== undefined && named.name !== e.name) {
      effect.route = e.name === 'held-back' || e.name === 'http' ? `${e.method} ${targetPath(e.target)}` : e.name;
      effect.name = named.name;
    }
    effects.push(effect);
  };
  for (const e of events) {
    if (e.type === 'tool.called' && (e.payload.mutating || reads)) {
      const p = e.payload;
      const x = p.exchangeId ? exchanges.get(p.exchangeId) : undefined;
      if (!p.mutating && x !== undefined && isTelemetry(x.request)) continue;
      // Held back (an HTTP call, an in-process tool, a WebSocket message): never sent, so never executed.
      const heldBack = isHeldBack(callServedFrom(p, servedOf));
      // A call the replay held back is its divergence's held-back effect, not a second one.
      if (heldBack && heldBackSteps.has(e.stepId)) continue;
      const body = x ? jsonOrText(bodyText(x.request.body, readBlob)) : undefined;
      const result = p.result !== undefined ? p.result : jsonOrText(bodyText(p.resultBody, readBlob));
      const effect: Omit<HttpEffect, 'index' | 'kind' | 'steps'> = {
        stepId: e.stepId,
        name: p.name,
        method: x?.request.method.toUpperCase() ?? 'CALL',
        target: x?.request.url ?? p.name,
        parameters: effectParameters(x?.request.url, body, p.args),
        args: p.args,
        executed: !heldBack && !(x?.error && !x.response),
        heldBack,
        seq: e.seq,
        ...(p.mutating ? {} : { read: true }),
      };
      if (x?.response) effect.status = x.response.status;
      if (result !== undefined) effect.result = result;
      // A call whose transport answered fine can still have failed (an MCP result marked isError).
      const error = toolCallFailure(p, x, { result, ...(readBlob ? { readBlob } : {}) });
      if (error) effect.error = error;
      add(effect);
    } else if (e.type === 'http.exchange' && !claimed.has(e.payload.exchangeId)) {
      const x = e.payload;
      const method = x.request.method.toUpperCase();
      // Held back: its divergence's held-back effect stands for it.
      if (isHeldBack(x.servedFrom)) continue;
      const read = !MUTATING.has(method) || isReadRequest(method, bodyText(x.request.body, readBlob));
      if (read && (!reads || isTelemetry(x.request))) continue;
      const effect: Omit<HttpEffect, 'index' | 'kind' | 'steps'> = {
        stepId: e.stepId,
        name: 'http',
        method,
        target: x.request.url,
        parameters: effectParameters(x.request.url, jsonOrText(bodyText(x.request.body, readBlob)), undefined),
        executed: !(x.error && !x.response),
        heldBack: false,
        seq: e.seq,
        ...(read ? { read: true } : {}),
      };
      if (x.response) {
        effect.status = x.response.status;
        const result = jsonOrText(bodyText(x.response.body, readBlob));
        if (result !== undefined) effect.result = result;
      }
      if (x.error) effect.error = x.error;
      add(effect);
    } else if (e.type === 'divergence' && e.payload.heldBack) {
      const h = e.payload.heldBack;
      // Reads are never side effects, held back or not.
      const read = readSteps.has(e.stepId) || isReadRequest(h.method, h.body);
      if (read && !reads) continue;
      add({
        stepId: e.stepId,
        name: 'held-back',
        method: h.method.toUpperCase(),
        target: h.target,
        parameters: effectParameters(h.target, h.body, undefined),
        executed: false,
        heldBack: true,
        seq: e.seq,
        ...(read ? { read: true } : {}),
      });
    }
  }
  return effects;
}
