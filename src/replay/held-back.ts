// Holding a call back: nothing may answer it (not the recording, no answerer), so it is never
// sent. It becomes an API_CALL step whose exchange is `servedFrom: 'blocked'`, a divergence that
// explains the miss (which match layers passed, the nearest recorded request, the differing
// fields), and an entry in ReplayResult.heldBack; the agent gets the miss policy's answer.

import { wireOf } from '../../sandbox/protocol.js';
import { isReadRequest } from '../recording/index.js';
import { type Answer, type Ask, stopped } from './answer.js';
import { explainMiss, type MatchResult } from './match.js';
import { type LiveRequest, parseJson, summaryOf, viewOf } from './normalize.js';
import type { ReplaySession } from './session.js';
import type { MissPolicy } from './types.js';

export function holdBack(session: ReplaySession, ask: Ask, m: MatchResult): Answer {
  const step = session.nextStep();
  if (session.shouldStop(step)) return stopped(session, step);
  session.beginStep(step, undefined);
  const { request: raw, bytes, redacted: live } = ask;
  const view = viewOf(live);
  const policy = policyFor(session, raw);
  const explanation = explainMiss(live, m);
  const body = live.bodyText === undefined ? undefined : parseJson(live.bodyText);
  // A held-back read (GET, an MCP tools/list) is not a side effect the replay kept from the world.
  const mutating = !isReadRequest(raw.method, body?.ok ? body.value : undefined);
  // Every unmatched call is held back (never sent); `mutating` tells side effects from reads.
  const held = {
    method: raw.method,
    target: live.url,
    ...(body ? { body: body.ok ? body.value : live.bodyText } : {}),
  };
  const exchangeId = session.nextExchangeId();
  const name = `${raw.method} ${view.path}`;
  const now = Date.now();
  session.writeStep({
    stepId: step,
    ...session.parentOfOwn(ask.isModel),
    stateType: 'API_CALL',
    name,
    start: now,
    end: now,
    events: [
      {
        type: 'tool.called',
        payload: {
          exchangeId,
          kind: 'http',
          name,
          stateType: 'API_CALL',
          args: { query: view.query, body: view.body },
          error: { code: 'HELD_BACK', message: 'not in the recording; never sent' },
          mutating,
          latencyMs: 0,
        },
      },
      {
        type: 'http.exchange',
        payload: {
          exchangeId,
          request: {
            method: raw.method,
            url: raw.url,
            headers: raw.headers,
            ...(bytes ? { body: session.writer.body(bytes, raw.headers['content-type']) } : {}),
          },
          error: { code: 'HELD_BACK', message: explanation },
          startedAt: new Date(now).toISOString(),
          durationMs: 0,
          servedFrom: 'blocked',
        },
      },
      session.diverge(step, {
        // A model call the prefix has no recorded call for is one call too many.
        kind: ask.isModel ? 'extra-call' : 'unmatched-request',
        ...(m.nearest ? { expected: { step: m.nearest.step, request: summaryOf(m.nearest.view) } } : {}),
        actual: summaryOf(view),
        fieldDiff: m.fieldDiff,
        message: `Step ${step}: ${explanation} Policy: ${policy}.`,
        heldBack: held,
      }),
    ],
    status: 'error',
    errorType: 'HELD_BACK',
  });
  session.heldBack.push({ step, ...held, mutating });
  session.served.blocked++;
  session.progress(step, 'held-back', `${raw.method} ${live.url}`);
  return { servedFrom: 'blocked', step, reply: ask.kind === 'tool' ? toolError(raw) : policyReply(policy, raw, live) };
}

function toolError(raw: LiveRequest) {
  const name = raw.url.replace(/^tool:/, '');
  return {
    error: { code: 'HELD_BACK', message: `tapedeck replay: tool ${name} with these arguments is not in the recording` },
  };
}

function policyReply(policy: MissPolicy, raw: LiveRequest, live: LiveRequest) {
  const message = `tapedeck replay: ${raw.method} ${live.url} is not in the recording and was not sent`;
  if (policy === 'fail') return { error: { code: 'ECONNREFUSED', message } };
  return {
    status: 503,
    statusText: 'Held back by tapedeck replay',
    headers: { 'content-type': 'application/json', 'x-tapedeck-held-back': '1' },
    body: wireOf(Buffer.from(JSON.stringify({ error: { code: 'HELD_BACK', type: 'tapedeck_held_back', message } }))),
  };
}

/** The miss policy of a call: by tool name or `METHOD /path`, else the mode's default. */
function policyFor(session: ReplaySession, req: LiveRequest): MissPolicy {
  const options = session.options;
  const byTool = options.onMissByTool ?? {};
  const key = `${req.method} ${viewOf(req).path}`;
  if (byTool[key]) return byTool[key];
  return options.onMiss ?? (options.mode === 'exact' ? 'fail' : 'error-response');
}
