// A FAKE API simulator for the FAKE model server — a script, not a language model. tapedeck's
// simulated answerer asks a model to write the response of a call the recording does not hold,
// showing it the recorded exchanges of the same endpoint; this script answers such a request
// deterministically: the nearest recorded response of the same endpoint, with the recorded record
// id swapped for the requested one (a 404 when the endpoint was never recorded). Any other conversation goes to the world's own policy.
import type { ScriptedPolicy } from './model-server.js';

const MARK = "You are tapedeck's API simulator.";

interface Shown {
  match: string;
  request: { method: string; path: string };
  response: { status?: number; body?: unknown };
}

const idsOf = (path: string) => (path.split('?')[0] ?? '').split('/').filter((s) => /\d/.test(s));

function simulate(userText: string): string {
  const question = JSON.parse(userText) as { request: { method: string; path: string }; recorded: Shown[] };
  // Only a recorded answer of the same endpoint says what this one looks like; else: not found.
  const example = question.recorded.find((x) => x.match === 'same path' || x.match === 'same endpoint');
  if (!example)
    return JSON.stringify({
      status: 404,
      body: {
        error: { code: 'not_found', message: `no route for ${question.request.method} ${question.request.path}` },
      },
    });
  let body = JSON.stringify(example.response.body ?? null);
  const from = idsOf(example.request.path);
  const to = idsOf(question.request.path);
  from.forEach((id, i) => {
    const next = to[i];
    if (next !== undefined) body = body.split(id).join(next);
  });
  return JSON.stringify({
    status: example.response.status ?? 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.parse(body),
  });
}

/** `policy`, with simulator requests answered by the script above. */
export function withFakeSimulator(policy: ScriptedPolicy): ScriptedPolicy {
  return (conversation) =>
    conversation.system.startsWith(MARK)
      ? { kind: 'final', text: simulate(conversation.userText) }
      : policy(conversation);
}
