// The simulated answerer (off unless configured): a model endpoint writes the answer to a call no
// other answerer took, from the recorded answers of the same endpoint and the request. Never for a
// mutating call unless its origin or route is allowed; an answer it cannot parse is not used (the
// call is held back instead).
import * as z from 'zod';
import type { RecordedExchange, SimulateConfig } from '../../config/index.js';
import { answerOf } from '../../providers/index.js';
import type { Usage } from '../../recording/index.js';
import { isSafeMethod } from '../match.js';
import { parseJson } from '../normalize.js';
import { matchRequestUrl } from './msw.js';
import { sameEndpoint } from './recorded.js';
import type { ChainAnswerer, ChainAsk } from './types.js';

/** The simulator's system prompt (a test model server recognises it by its first line). */
export const SIMULATOR_PROMPT = `You are tapedeck's API simulator.
A replay of a recorded agent run made an HTTP call that the recording does not hold. Write the response the real API would most likely have given, consistent with the recorded exchanges of the same API (same shapes, same field names, same error format) and with the request. Do not invent side effects beyond what the request asks.
Reply with one JSON object and nothing else: {"status": <HTTP status>, "headers": {"content-type": "..."}, "body": <the JSON body, or a string>}.`;

/** The simulator's model when the project file names none. */
export const DEFAULT_SIMULATOR_MODEL = 'gpt-4.1-mini';

const SimulatedResponse = z.object({
  status: z.number().int().min(100).max(599),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.unknown().optional(),
});

/** Whether a mutating call may be simulated: its origin, `METHOD /path` or `METHOD /pattern/:id` is allowed. */
export function mayMutate(allow: readonly string[], method: string, url: string): boolean {
  const u = new URL(url);
  return allow.some((entry) => {
    if (/^https?:\/\//.test(entry)) return new URL(entry).origin === u.origin;
    const m = /^([A-Z]+)\s+(\/\S*)$/.exec(entry.trim());
    if (!m || m[1] !== method) return false;
    return m[2] === u.pathname || matchRequestUrl(u, m[2] as string, u.origin).matches;
  });
}

function contentOf(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const parsed = parseJson((fenced ? fenced[1] : text)?.trim());
  return parsed.ok ? parsed.value : undefined;
}

export function simulatedAnswerer(
  config: SimulateConfig,
  recorded: readonly RecordedExchange[],
  warn: (message: string) => void,
): ChainAnswerer {
  const origins = config.origins?.map((o) => new URL(o).origin);
  const allow = config.allowMutating ?? [];
  const endpoint = `${config.endpoint.replace(/\/$/, '')}/chat/completions`;
  const examples = config.examples ?? 8;
  return {
    name: `simulator (${config.model ?? DEFAULT_SIMULATOR_MODEL} at ${new URL(config.endpoint).origin})`,
    servedFrom: 'simulated',
    accepts(ask: ChainAsk, { prefix }) {
      if (prefix || ask.kind !== 'http' || ask.isModel) return false;
      const { method, url } = ask.request;
      if (origins && !origins.includes(new URL(url).origin)) return false;
      return isSafeMethod(method) || mayMutate(allow, method, url);
    },
    async answer(ask) {
      const { method, url, bodyText } = ask.request;
      const u = new URL(url);
      const shown = sameEndpoint(recorded, method, url, examples).map((x) => ({
        match: x.match,
        request: { method: x.method, path: x.path, ...(x.requestBody !== undefined ? { body: x.requestBody } : {}) },
        response: { status: x.status, ...(x.body !== undefined ? { body: x.body } : {}) },
      }));
      const body = parseJson(bodyText);
      const question = {
        request: {
          method,
          path: `${u.pathname}${u.search}`,
          ...(bodyText !== undefined ? { body: body.ok ? body.value : bodyText } : {}),
        },
        recorded: shown,
      };
      const key = process.env[config.apiKeyEnv ?? 'OPENAI_API_KEY'];
      const started = Date.now();
      const model = config.model ?? DEFAULT_SIMULATOR_MODEL;
      let content: string | undefined;
      let spent: { model: string; usage?: Usage } = { model };
      try {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({
            model,
            temperature: 0,
            messages: [
              { role: 'system', content: SIMULATOR_PROMPT },
              { role: 'user', content: JSON.stringify(question, null, 1) },
            ],
          }),
        });
        const json: unknown = await response.json();
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const answer = answerOf('openai.chat.completions', json);
        content = answer?.text;
        spent = { model: answer?.model ?? model, ...(answer?.usage ? { usage: answer.usage } : {}) };
      } catch (error) {
        warn(
          `the simulator at ${endpoint} failed for ${method} ${url}: ${(error as Error).message}; the call was held back`,
        );
        return undefined;
      }
      const parsed = SimulatedResponse.safeParse(contentOf(content ?? ''));
      if (!parsed.success) {
        warn(`the simulator's answer for ${method} ${url} is not {status, headers, body}; the call was held back`);
        return undefined;
      }
      const answer = parsed.data;
      const text =
        typeof answer.body === 'string' ? answer.body : answer.body === undefined ? '' : JSON.stringify(answer.body);
      const headers = { ...(answer.headers ?? {}) };
      if (
        typeof answer.body !== 'string' &&
        answer.body !== undefined &&
        !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')
      )
        headers['content-type'] = 'application/json';
      return {
        url,
        started,
        durationMs: Date.now() - started,
        response: { status: answer.status, statusText: '', headers, bytes: Buffer.from(text, 'utf8') },
        simulatedBy: { provider: 'openai.chat.completions', ...spent },
      };
    },
  };
}
