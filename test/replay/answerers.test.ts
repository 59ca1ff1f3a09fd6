// The answer seam (src/replay/answer.ts): a call the recording cannot serve goes to the
// answerers in order, and only when none accepts it is it held back. The answer's provenance
// is written on the replay's exchange and counted in the result.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { type HttpExchangePayload, readRecording, type ToolCalledPayload } from '../../src/recording/index.js';
import { type Answerer, replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'service-agent.mjs');

let service: TestServer;
let hits: string[];
let tmp: ReturnType<typeof tempDir>;
let recorded: string;

beforeAll(async () => {
  tmp = tempDir('tapedeck-answerers-');
  hits = [];
  service = await startServer((req, _body, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ quote: hits.length, url: req.url }));
  });
  recorded = path.join(tmp.dir, 'recorded');
  const run = await recordCommand({
    command: [process.execPath, AGENT],
    env: { SERVICE_URL: service.url, RUN: '1' },
    out: recorded,
    stdio: 'pipe',
  });
  expect(run.exitCode).toBe(0);
});

afterAll(async () => {
  await service?.close();
  tmp?.remove();
});

/** An answerer that forwards GET /quote to the service, as a sandbox service would. */
function quoteService(): Answerer & { asked: number } {
  return {
    name: 'quote service',
    servedFrom: 'live',
    asked: 0,
    accepts: (ask) => ask.kind === 'http' && !ask.isModel && new URL(ask.request.url).pathname === '/quote',
    async answer(ask) {
      this.asked++;
      const started = Date.now();
      const response = await fetch(ask.request.url);
      const headers: Record<string, string> = {};
      response.headers.forEach((v, k) => {
        headers[k] = v;
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      return {
        url: ask.request.url,
        started,
        durationMs: Date.now() - started,
        response: { status: response.status, statusText: response.statusText, headers, bytes },
      };
    },
  };
}

describe('answerers between the recording and held back', () => {
  it('answer a call the recording cannot serve, and the replay says who answered', async () => {
    const answerer = quoteService();
    const before = hits.length;
    const result = await replay({
      recording: recorded,
      mode: 'counterfactual',
      env: { SERVICE_URL: service.url, RUN: '2' },
      out: path.join(tmp.dir, 'answered'),
      stdio: 'pipe',
      answerers: [answerer],
    });
    expect(answerer.asked).toBe(1);
    expect(hits.slice(before)).toEqual(['/quote?run=2']);
    expect(result.output?.stdout).toContain('200 {"quote":2,"url":"/quote?run=2"}');
    expect(result.heldBack).toEqual([]);
    expect(result.served).toMatchObject({ recording: 0, live: 1, blocked: 0 });
    expect(result.divergences).toMatchObject([{ kind: 'unmatched-request', step: 1 }]);
    expect(result.divergences[0]?.message).toContain('answered by quote service');

    const replayed = await readRecording(result.dir);
    const exchange = replayed.events.find((e) => e.type === 'http.exchange')?.payload as HttpExchangePayload;
    expect(exchange).toMatchObject({ servedFrom: 'live', response: { status: 200 } });
    const tool = replayed.events.find((e) => e.type === 'tool.called')?.payload as ToolCalledPayload;
    expect(tool).toMatchObject({ name: 'GET /quote', result: { quote: 2 } });
    const kinds = replayed.events.filter((e) => e.stepId === 1).map((e) => e.type);
    expect(kinds).toEqual(['step.started', 'tool.called', 'http.exchange', 'divergence', 'step.completed']);
  });

  it("classify a call the recording cannot serve by the user's rules (--rules), as the recorder would", async () => {
    const file = path.join(tmp.dir, 'rules.yaml');
    writeFileSync(
      file,
      'rules:\n  - match: { method: GET, path: /quote }\n    stateType: RETRIEVE\n    name: get_quote\n    mutating: false\n',
    );
    for (const [name, rules] of [
      ['file', file],
      ['list', [{ match: { method: 'GET', path: '/quote' }, stateType: 'RETRIEVE' as const, name: 'get_quote' }]],
    ] as const) {
      const result = await replay({
        recording: recorded,
        mode: 'counterfactual',
        env: { SERVICE_URL: service.url, RUN: `rules-${name}` },
        out: path.join(tmp.dir, `rules-${name}`),
        stdio: 'pipe',
        answerers: [quoteService()],
        rules,
      });
      const replayed = await readRecording(result.dir);
      const tool = replayed.events.find((e) => e.type === 'tool.called')?.payload as ToolCalledPayload;
      expect(tool, name).toMatchObject({ name: 'get_quote', stateType: 'RETRIEVE' });
      const started = replayed.events.find((e) => e.type === 'step.started' && e.stepId === 1);
      expect(started?.payload, name).toMatchObject({ stateType: 'RETRIEVE', name: 'get_quote' });
    }
    // A bad rules file stops the replay at once, in one line, before anything runs.
    writeFileSync(file, 'rules:\n  - match: { verb: GET }\n    stateType: RETRIEVE\n');
    await expect(
      replay({
        recording: recorded,
        mode: 'counterfactual',
        out: path.join(tmp.dir, 'rules-bad'),
        stdio: 'pipe',
        rules: file,
      }),
    ).rejects.toThrow(/rules\[0\]/);
  });

  it('hold the call back when no answerer accepts it, and never send it', async () => {
    const answerer = quoteService();
    const before = hits.length;
    const result = await replay({
      recording: recorded,
      mode: 'counterfactual',
      env: { SERVICE_URL: `${service.url}/elsewhere`, RUN: '3' },
      out: path.join(tmp.dir, 'held'),
      stdio: 'pipe',
      answerers: [answerer],
    });
    expect(answerer.asked).toBe(0);
    expect(hits.length).toBe(before);
    expect(result.served).toMatchObject({ live: 0, blocked: 1 });
    expect(result.heldBack).toMatchObject([{ method: 'GET', mutating: false }]);
    expect(result.output?.stdout).toContain('503');
  });

  it('serve a call the recording has from the recording, without asking the answerers', async () => {
    const answerer = quoteService();
    const before = hits.length;
    const result = await replay({
      recording: recorded,
      mode: 'exact',
      env: { SERVICE_URL: service.url, RUN: '1' },
      out: path.join(tmp.dir, 'exact'),
      stdio: 'pipe',
      answerers: [answerer],
    });
    expect(answerer.asked).toBe(0);
    expect(hits.length).toBe(before);
    expect(result.served).toMatchObject({ recording: 1, live: 0, blocked: 0 });
    expect(result.output?.stdout).toContain('200 {"quote":1,"url":"/quote?run=1"}');
  });
});
