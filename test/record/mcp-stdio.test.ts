// JSON-RPC over a child's stdio (the MCP stdio transport) becomes steps as MCP over HTTP does
// (src/record/preload/record-mcp-stdio.mjs): `tools/call` an MCP_CALL step named after the tool,
// other requests OBSERVE steps, a JSON-RPC error and a request the server never answered steps
// that failed; notifications and a child that does not speak JSON-RPC leave none. Requests and
// answers in pieces and batches are taken whole, and the agent reads everything the server wrote
// although it attaches its reader late (the pipes are watched, not read). The exact replay runs
// the server again (its values come from the recording) and keeps the steps.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { readRecording, type ToolCalledPayload } from '../../src/recording/index.js';
import { FIXTURES, recordAgent, replayExact, tempDir } from './helpers.js';

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
      expect((await mcpSteps(result.dir)).map((s) => [s.step, s.type, s.name])).toEqual(
        steps.map((s) => [s.step, s.type, s.name]),
      );
    }
  });
});
