// The simulated answerer against a (fake, scripted) model endpoint: it shows the model the recorded
// answers of the same endpoint and the request, uses the answer it writes, refuses mutating calls
// unless allowed, and gives up (the call is then held back) on an answer it cannot parse.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFakeSimulator } from '../../examples/world/fake-simulator.js';
import { decide, startModelServer } from '../../examples/world/index.js';
import type { ModelServer } from '../../examples/world/model-server.js';
import { type Recording, readRecording } from '../../src/recording/index.js';
import { recordedExchanges, sameEndpoint } from '../../src/replay/chain/recorded.js';
import { mayMutate, simulatedAnswerer } from '../../src/replay/chain/simulate.js';
import type { Ask } from '../../src/replay/index.js';

const FIXED = fileURLToPath(new URL('../../recordings/examples/openai-fixed-stream', import.meta.url));
let recording: Recording;
let origin: string;
let model: ModelServer;
let garbage: Server;
let garbageUrl: string;

const ask = (method: string, url: string, body?: unknown): Ask => {
  const request = {
    method,
    url,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { bodyText: JSON.stringify(body) }),
  };
  return { kind: 'http', request, redacted: request, isModel: false };
};

beforeAll(async () => {
  recording = await readRecording(FIXED);
  const lookup = recordedExchanges(recording).find((x) => x.path === '/passengers/P-102');
  origin = new URL(lookup?.url ?? '').origin;
  model = await startModelServer({ policy: withFakeSimulator(decide) });
  garbage = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ message: { content: 'Sure! The passenger is probably fine.' } }] }));
  });
  await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
  garbageUrl = `http://127.0.0.1:${(garbage.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await model?.close();
  garbage?.close();
});

describe('the simulated answerer', () => {
  it('writes the answer of an unrecorded read from the recorded answers of the same endpoint', async () => {
    const warnings: string[] = [];
    const sim = simulatedAnswerer({ endpoint: `${model.url}/v1` }, recordedExchanges(recording), (w) =>
      warnings.push(w),
    );
    const call = ask('GET', `${origin}/passengers/P-100`);
    expect(sim.accepts(call, { mode: 'counterfactual', prefix: false })).toBe(true);
    expect(sim.accepts(call, { mode: 'exact', prefix: true })).toBe(false);
    const answer = await sim.answer(call);
    expect(answer?.response?.status).toBe(200);
    const body = JSON.parse(answer?.response?.bytes.toString('utf8') ?? '{}') as { passenger: { id: string } };
    expect(body.passenger.id).toBe('P-100');
    expect(warnings).toEqual([]);
    // What writing it cost: the simulator's model and the usage its endpoint reported (the ledger costs it).
    expect(answer?.simulatedBy?.provider).toBe('openai.chat.completions');
    expect(answer?.simulatedBy?.model).toBeTruthy();
    expect(answer?.simulatedBy?.usage?.output).toBeGreaterThan(0);
    // What the model was shown: the simulator's instructions, the request, and the recorded
    // answer of the same endpoint first.
    const sent = JSON.parse(model.log.at(-1) ?? '{}') as { request: { messages: Array<{ content: string }> } };
    expect(sent.request.messages[0]?.content).toMatch(/^You are tapedeck's API simulator\./);
    const question = JSON.parse(sent.request.messages[1]?.content ?? '{}') as {
      request: { path: string };
      recorded: Array<{ match: string; request: { path: string } }>;
    };
    expect(question.request.path).toBe('/passengers/P-100');
    expect(question.recorded[0]).toMatchObject({ match: 'same endpoint', request: { path: '/passengers/P-102' } });
  });

  it('refuses mutating calls unless their origin or route is allowed', () => {
    const exchanges = recordedExchanges(recording);
    const post = ask('POST', `${origin}/bookings`, { flight_id: 'FL-101', passenger_id: 'P-102' });
    const ctx = { mode: 'counterfactual' as const, prefix: false };
    expect(simulatedAnswerer({ endpoint: model.url }, exchanges, () => {}).accepts(post, ctx)).toBe(false);
    for (const allow of [['POST /bookings'], [origin], ['POST /bookings/:id', 'POST /bookings']])
      expect(
        simulatedAnswerer({ endpoint: model.url, allowMutating: allow }, exchanges, () => {}).accepts(post, ctx),
      ).toBe(true);
    expect(mayMutate(['DELETE /bookings/:id'], 'DELETE', `${origin}/bookings/BK-0001`)).toBe(true);
    expect(mayMutate(['DELETE /bookings/:id'], 'POST', `${origin}/bookings`)).toBe(false);
    expect(mayMutate(['http://127.0.0.1:1'], 'POST', `${origin}/bookings`)).toBe(false);
    // Only the origins it is given, when given.
    const other = simulatedAnswerer({ endpoint: model.url, origins: ['http://127.0.0.1:1'] }, exchanges, () => {});
    expect(other.accepts(ask('GET', `${origin}/passengers/P-100`), ctx)).toBe(false);
  });

  it('gives up on an answer it cannot read, with a warning, so the call is held back', async () => {
    const warnings: string[] = [];
    const sim = simulatedAnswerer({ endpoint: garbageUrl }, recordedExchanges(recording), (w) => warnings.push(w));
    expect(await sim.answer(ask('GET', `${origin}/passengers/P-100`))).toBeUndefined();
    expect(warnings[0]).toMatch(/is not \{status, headers, body\}; the call was held back/);
  });

  it('orders the recorded exchanges by how alike their endpoint is', () => {
    const all = recordedExchanges(recording);
    const ranked = sameEndpoint(all, 'GET', `${origin}/bookings/BK-0002`, 10);
    expect(ranked[0]).toMatchObject({ match: 'same endpoint', path: '/bookings/BK-0001', method: 'GET' });
    expect(ranked.map((x) => x.match)).toContain('same API');
  });
});
