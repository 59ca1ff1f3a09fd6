// JSON-RPC over a child's stdio (the MCP stdio transport) becomes steps as MCP over HTTP does
// (sandbox/preload/shared-mcp-stdio.mjs): `tools/call` an MCP_CALL step named after the tool,
// other requests OBSERVE steps, a JSON-RPC error and a request the server never answered steps
// that failed; notifications and a child that does not speak JSON-RPC leave none. Requests and
// answers in pieces and batches are taken whole, and the agent reads everything the server wrote
// although it attaches its reader late (the pipes are watched, not read). The exact replay runs
// the server again (its values come from the recording) and keeps the steps.
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { answerProvenance, canonicalJson, readRecording, type ToolCalledPayload } from '../../src/recording/index.js';
import { FIXTURES, recordAgent, replayExact, startServer, tempDir } from './helpers.js';

const AGENT = path.join(FIXTURES, 'stdio-rpc-agent.mjs');
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

async function mcpSteps(dir: string) {
  const recording = await readRecording(dir);
  const types = new Map<number, string>();
  for (const e of recording.events) if (e.type === 'step.started') types.set(e.stepId, e.payload.stateType);
  return recording.events.flatMap((e) =>
    e.type === 'tool.called' && e.payload.kind === 'mcp'
      ? [{ step: e.stepId, type: types.get(e.stepId), ...(e.payload as ToolCalledPayload) }]
      : [],
  );
}

describe('JSON-RPC over stdio (MCP servers the agent starts)', () => {
  const tmp = tempDir('tapedeck-mcp-stdio-');
  afterAll(() => tmp.remove());

  it('each request and its answer is a step, and the exact replay keeps them', { timeout: 180_000 }, async () => {
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordAgent(AGENT, out);
    expect(recorded.exitCode).toBe(0);
    const { read, text } = JSON.parse(recorded.stdout) as { read: unknown[]; text: string };
    // The agent read every answer, batch included, although its reader came late.
    expect(read).toHaveLength(3);
    expect(text).toContain('is not how I talk');
    const steps = await mcpSteps(out);
    const echo = (read[0] as { result: unknown }).result;
    expect(steps.map((s) => [s.type, s.name, s.args, s.error?.code])).toEqual([
      ['MCP_CALL', 'lookup', { q: 'refund' }, undefined],
      ['OBSERVE', 'mcp fail', {}, '-32601'],
      ['MCP_CALL', 'lookup', { q: 'a' }, undefined],
      ['OBSERVE', 'mcp resources/list', {}, undefined],
      ['OBSERVE', 'mcp exit', {}, 'NO_RESPONSE'],
    ]);
    expect(steps[0]?.result).toEqual(echo);
    expect(steps[0]?.mutating).toBe(true);
    expect(steps[1]?.error?.message).toBe('no such method');
    expect(steps.every((s) => s.latencyMs >= 0)).toBe(true);

    for (const isolation of LEVELS) {
      const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation);
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.output?.stdout).toBe(recorded.stdout);
      const replayed = await mcpSteps(result.dir);
      expect(replayed.map((s) => [s.step, s.type, s.name])).toEqual(steps.map((s) => [s.step, s.type, s.name]));
      // The server answered as recorded: each answer is the recording's.
      expect(replayed.map((s) => s.servedFrom)).toEqual(steps.map(() => undefined));
    }

    // A server that now answers otherwise: the answers the recording did not hold are the
    // sandbox's (its tool call, the step's provenance and the ledger say so); the same error and
    // the unanswered request are the recording's still.
    const twisted = await replayExact(out, path.join(tmp.dir, 'replay-twisted'), 'none', { MCP_TWIST: 'now' });
    const replayed = await mcpSteps(twisted.dir);
    expect(replayed.map((s) => [s.name, s.servedFrom])).toEqual([
      ['lookup', 'sandbox'],
      ['mcp fail', undefined],
      ['lookup', 'sandbox'],
      ['mcp resources/list', 'sandbox'],
      ['mcp exit', undefined],
    ]);
    const served = answerProvenance(await readRecording(twisted.dir)).steps;
    expect(replayed.map((s) => served.get(s.step))).toEqual([
      'sandbox',
      'recording',
      'sandbox',
      'sandbox',
      'recording',
    ]);
  });
  // Which of a request over stdio and the calls around it reaches the recorder first is a race
  // (the server answers in another process): the replay writes the request's step at its recorded
  // number whichever comes first, and every call keeps its own. Recorded as it happened (/after
  // before the answer), then with the numbers of two steps swapped as the other order of the
  // race would have numbered them.
  it('a step over stdio keeps its recorded number when the replay reaches it out of order', {
    timeout: 180_000,
  }, async () => {
    const api = await startServer((req, _body, res) => {
      res.end(`answer to ${req.url}`);
    });
    try {
      const out = path.join(tmp.dir, 'race');
      const recorded = await recordAgent(path.join(FIXTURES, 'stdio-rpc-calls-agent.mjs'), out, { API_URL: api.url });
      expect(recorded.exitCode).toBe(0);
      const names = async (dir: string) =>
        (await readRecording(dir)).events
          .flatMap((e) => (e.type === 'step.started' ? [[e.stepId, e.payload.name] as [number, string]] : []))
          .sort((a, b) => a[0] - b[0]);
      expect(await names(out)).toEqual([
        [1, 'GET /before'],
        [2, 'GET /after'],
        [3, 'lookup'],
        [4, 'GET /last'],
      ]);
      for (const [label, a, b] of [
        ['as recorded', 0, 0],
        ['the answer first (behind the replay)', 2, 3],
        ['the last call first (ahead of a call still to come)', 3, 4],
      ] as const) {
        const dir = a === 0 ? out : swapSteps(out, path.join(tmp.dir, `race-${a}-${b}`), a, b);
        const result = await replayExact(dir, path.join(tmp.dir, `race-${a}-${b}-replay`), 'none', {
          API_URL: api.url,
        });
        expect(result.divergences, label).toEqual([]);
        expect(result.output?.stdout, label).toBe(recorded.stdout);
        expect(await names(result.dir), label).toEqual(await names(dir));
      }
    } finally {
      await api.close();
    }
  });
});

/** A copy of a recording with steps `a` and `b` numbered the other way round (integrity updated). */
function swapSteps(dir: string, out: string, a: number, b: number): string {
  cpSync(dir, out, { recursive: true });
  const swap = (n: number | undefined) => (n === a ? b : n === b ? a : n);
  const text = readFileSync(path.join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const event = JSON.parse(line) as { stepId: number; parentStepId?: number };
      event.stepId = swap(event.stepId) as number;
      if (event.parentStepId !== undefined) event.parentStepId = swap(event.parentStepId);
      return canonicalJson(event);
    })
    .join('\n');
  writeFileSync(path.join(out, 'events.jsonl'), `${text}\n`);
  const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  manifest.integrity.eventsSha256 = createHash('sha256').update(`${text}\n`).digest('hex');
  writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return out;
}
