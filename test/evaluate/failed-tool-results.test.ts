// A tool call whose transport answered fine can still have failed: an MCP result marked `isError`
// (over stdio, over Streamable HTTP), a JSON-RPC error in an HTTP 200 answer, a tool() that threw, or
// an MCP call whose server's own request got HTTP 500 while it answered as if all went well. None
// of them landed, so none is a verified execution: eval fails each with STATE_CHANGE_FAILED, as it
// does a plain HTTP request answered 500. The same agent in a world where every call works passes.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Contract, evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { type Recording, readRecording } from '../../src/recording/index.js';
import { recordAgent, startServer, tempDir } from '../record/helpers.js';
import { startFakeOpenAI } from '../sdks/servers/fake-openai.js';
import { startMcpServer } from '../sdks/servers/mcp-server.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'failing-tools-agent.mjs');
const PLAN = ['place_order', 'quiet_order', 'get_forecast', 'cancel_order', 'reserve_stock'];

const executing = (tool: string): Contract =>
  parseContract(`
task_id: ${tool}
success_criteria: { required_outputs: [final_answer], execution_result: { required: true } }
execution: { action: { tool: ${tool} }, max_executions: 1 }
`);

const tmp = tempDir('tapedeck-failed-tools-');
const recordings: Record<'failing' | 'working', Recording> = {} as never;

beforeAll(async () => {
  for (const world of ['failing', 'working'] as const) {
    const failing = world === 'failing';
    let orders = 0;
    const api = await startServer((req, _body, res) => {
      if (req.url === '/rpc') {
        const answer = failing
          ? { error: { code: -32000, message: 'the order is already shipped' } }
          : { result: { content: [{ type: 'text', text: 'cancelled' }] } };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, ...answer })}\n\n`);
        return;
      }
      res.writeHead(failing ? 500 : 201, { 'content-type': 'application/json' });
      res.end(JSON.stringify(failing ? { error: 'out of capacity' } : { id: `ORD-${++orders}` }));
    });
    const mcp = await startMcpServer();
    const model = await startFakeOpenAI({
      toolPlan: PLAN,
      toolArgs: {
        place_order: { item: 'gadget', qty: 2 },
        quiet_order: { item: 'gizmo', qty: 3 },
        get_forecast: { city: failing ? 'Atlantis' : 'Lima' },
        cancel_order: { order_id: 'ORD-9' },
        reserve_stock: { item: 'gadget' },
      },
      finalText: failing ? 'Sorry, nothing could be done.' : 'All done.',
    });
    const out = path.join(tmp.dir, world);
    const rec = await recordAgent(AGENT, out, {
      OPENAI_BASE_URL: `${model.url}/v1`,
      MCP_URL: mcp.url,
      API_URL: api.url,
      ...(failing ? { FAIL: '1' } : {}),
    });
    expect(rec.exitCode, rec.stdout).toBe(0);
    expect(rec.stdout).toContain('FINAL:');
    await Promise.all([api.close(), mcp.close(), model.close()]);
    recordings[world] = await readRecording(out);
  }
}, 180_000);

afterAll(() => tmp.remove());

const execution = (world: 'failing' | 'working', tool: string) =>
  evaluateRecording(recordings[world], executing(tool)).validators.find((v) => v.validatorName === 'execution')!;

describe('a tool call whose result says it failed', () => {
  it.each([
    ['place_order', /step \d+ CALL place_order -> TOOL_ERROR/],
    ['quiet_order', /step \d+ CALL quiet_order -> HTTP_500/],
    ['get_forecast', /step \d+ POST http:\/\/127\.0\.0\.1:\d+\/mcp -> TOOL_ERROR/],
    ['cancel_order', /step \d+ POST http:\/\/127\.0\.0\.1:\d+\/rpc -> -32000/],
    ['reserve_stock', /step \d+ CALL reserve_stock -> /],
  ])('is no verified execution: %s', (tool, failed) => {
    const v = execution('failing', tool);
    expect(v.failureReasonCodes).toEqual(['STATE_CHANGE_FAILED']);
    expect(v.diagnosticMessage).toMatch(/^every execution failed: /);
    expect(v.diagnosticMessage).toMatch(failed);
    expect(v.diagnosticMessage).not.toContain('verified');
  });

  it('keeps the server’s own request failed too, and says why the call did not land', () => {
    const v = execution('failing', 'place_order');
    expect(v.diagnosticMessage).toMatch(/place_order \(POST http:\/\/127\.0\.0\.1:\d+\/orders\) -> 500/);
    const quiet = evaluateRecording(recordings.failing, executing('quiet_order'));
    expect(quiet.task.hardSuccess).toBe(false);
    expect(quiet.task.primaryFailureReasonCode).toBe('STATE_CHANGE_FAILED');
  });

  it.each(PLAN)('is a verified execution when it worked: %s', (tool) => {
    const v = execution('working', tool);
    expect(v.failureReasonCodes).toEqual([]);
    expect(v.diagnosticMessage).toMatch(/^\d execution\(s\) verified: /);
    expect(v.diagnosticMessage).not.toContain('did not land');
  });
});
