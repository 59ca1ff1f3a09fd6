// Reads the providers' conformance fixtures (recordings made by make-fixtures.ts) into model
// exchanges: the request and response as recorded, the model.called the recorder wrote, and what
// the FAKE model server meant to send.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROMPTS } from '../../examples/world/index.js';
import type { Meant } from '../../examples/world/model-server.js';
import { bodyText } from '../../src/diff/index.js';
import type { ProviderRequest, ProviderResponse } from '../../src/providers/index.js';
import {
  bodyBytes,
  type HttpExchangePayload,
  type ModelCalledPayload,
  type Recording,
  readRecording,
} from '../../src/recording/index.js';
import { FIXTURES, VARIANTS } from './make-fixtures.js';

export interface ModelExchange {
  fixture: string;
  /** Position of the call in its run (0 = first). */
  index: number;
  step: number;
  exchange: HttpExchangePayload;
  request: ProviderRequest;
  /** The request body as sent. */
  body: Record<string, unknown>;
  response: ProviderResponse;
  recorded: ModelCalledPayload;
  meant: Meant;
  /** Whether the server streamed the answer (recorded as chunks, or whole when the stream is binary). */
  stream: boolean;
}

export interface Fixture {
  name: string;
  recording: Recording;
  /** The system prompt the agent ran with (the prompt file, trimmed as the agent reads it). */
  system: string;
  calls: ModelExchange[];
  /** The non-model HTTP exchanges (tool calls of the agent). */
  others: HttpExchangePayload[];
}

/** Request and response of a recorded exchange as a provider sees them. */
export function providerView(
  exchange: HttpExchangePayload,
  recording: Recording,
): { request: ProviderRequest; body: unknown; response: ProviderResponse } {
  const text = bodyText(exchange.request.body, recording.readBlob);
  const body: unknown = text === undefined ? undefined : JSON.parse(text);
  const res = exchange.response;
  const resText = res?.chunks ? undefined : bodyText(res?.body, recording.readBlob);
  return {
    request: {
      method: exchange.request.method,
      url: new URL(exchange.request.url),
      headers: exchange.request.headers,
      json: body,
    },
    body,
    response: {
      status: res?.status ?? 0,
      headers: res?.headers ?? {},
      ...(res?.chunks
        ? { chunks: res.chunks }
        : resText === undefined
          ? { bytes: bodyBytes(recording, res?.body) }
          : { json: JSON.parse(resText) }),
    },
  };
}

/** Every fixture on disk (a folder with a manifest and its model log beside it). */
export async function loadFixtures(): Promise<Fixture[]> {
  const names = existsSync(FIXTURES)
    ? readdirSync(FIXTURES).filter((n) => existsSync(path.join(FIXTURES, n, 'manifest.json')))
    : [];
  const fixtures: Fixture[] = [];
  for (const name of names.sort()) {
    const recording = await readRecording(path.join(FIXTURES, name));
    const variant = VARIANTS.find((v) => name.endsWith(`-${v.suffix}`));
    if (!variant) throw new Error(`fixture ${name}: no variant ends its name`);
    const system = (await readFile(PROMPTS[variant.prompt], 'utf8')).trim();
    const meant = readFileSync(path.join(FIXTURES, `${name}.model-log.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { meant: Meant; stream: boolean });
    const exchanges = new Map<string, HttpExchangePayload>();
    for (const e of recording.events) if (e.type === 'http.exchange') exchanges.set(e.payload.exchangeId, e.payload);
    const calls: ModelExchange[] = [];
    const modelExchangeIds = new Set<string>();
    for (const e of recording.events) {
      if (e.type !== 'model.called') continue;
      const exchange = exchanges.get(e.payload.exchangeId ?? '');
      if (!exchange) throw new Error(`fixture ${name}: model call at step ${e.stepId} has no exchange`);
      modelExchangeIds.add(exchange.exchangeId);
      const view = providerView(exchange, recording);
      const index = calls.length;
      const m = meant[index];
      if (!m) throw new Error(`fixture ${name}: the model log has no entry ${index + 1}`);
      calls.push({
        fixture: name,
        index,
        step: e.stepId,
        exchange,
        request: view.request,
        body: view.body as Record<string, unknown>,
        response: view.response,
        recorded: e.payload,
        meant: m.meant,
        stream: m.stream,
      });
    }
    if (calls.length !== meant.length)
      throw new Error(`fixture ${name}: ${calls.length} model calls recorded, ${meant.length} served`);
    const others = [...exchanges.values()].filter((x) => !modelExchangeIds.has(x.exchangeId));
    fixtures.push({ name, recording, system, calls, others });
  }
  return fixtures;
}

/** The travel agents' tools and task, from the agents' own module. */
export async function travelAgent(): Promise<{
  tools: Array<{ name: string; required: string[] }>;
  task: string;
}> {
  const url = pathToFileURL(path.resolve(import.meta.dirname, '../../examples/agents/tools.mjs')).href;
  const mod = (await import(url)) as { TOOLS: Array<{ name: string; required: string[] }>; userMessage(): string };
  return { tools: mod.TOOLS, task: mod.userMessage() };
}
