import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isTelemetry } from '../recording/index.js';
import { classifyHttp, stdioRpcCall } from './classify.js';
import { loadToolRules } from './rules-file.js';

const call = (method: string, url: string, json?: unknown) => ({ method, url: new URL(url), json });

describe('classifyHttp', () => {
  it('calls JSON-RPC tools/call an MCP_CALL named by the tool, other MCP methods OBSERVE', () => {
    const mcp = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { q: 'x' } } };
    expect(classifyHttp(call('POST', 'http://h/mcp', mcp))).toEqual({
      kind: 'mcp',
      name: 'search',
      stateType: 'MCP_CALL',
      args: { q: 'x' },
      mutating: true,
    });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect(classifyHttp(call('POST', 'http://h/mcp', list))).toMatchObject({ stateType: 'OBSERVE', mutating: false });
  });

  it('a JSON-RPC method that only reads never mutates; others do unless a rule declares them reads', () => {
    const rpc = (method: string) => call('POST', 'http://h/rpc', { jsonrpc: '2.0', id: 1, method, params: {} });
    for (const read of ['tools/list', 'resources/read', 'prompts/get', 'initialize', 'notifications/initialized'])
      expect(classifyHttp(rpc(read)).mutating, read).toBe(false);
    expect(classifyHttp(rpc('orders/create')).mutating).toBe(true);
    const rules = [{ match: { rpcMethod: 'orders/get' }, stateType: 'API_CALL' as const, mutating: false }];
    expect(classifyHttp(rpc('orders/get'), rules).mutating).toBe(false);
  });

  it('calls GETs on search-like paths RETRIEVE and everything else API_CALL', () => {
    expect(classifyHttp(call('GET', 'http://h/policies?q=refund'))).toMatchObject({
      stateType: 'RETRIEVE',
      args: { q: 'refund' },
      mutating: false,
    });
    expect(classifyHttp(call('GET', 'http://h/flights?to=DEN'))).toMatchObject({ stateType: 'API_CALL' });
    expect(classifyHttp(call('POST', 'http://h/search', { q: 1 }))).toMatchObject({
      stateType: 'API_CALL',
      mutating: true,
    });
    expect(classifyHttp(call('DELETE', 'http://h/bookings/1'))).toMatchObject({ mutating: true });
  });

  it('applies user rules first, from a YAML file', () => {
    const file = path.join(os.tmpdir(), `rules-${process.pid}.yaml`);
    onTestFinished(() => rmSync(file, { force: true }));
    writeFileSync(
      file,
      'rules:\n  - match: { method: GET, path: "/^\\\\/flights/" }\n    stateType: RETRIEVE\n    name: search_flights\n',
    );
    const rules = loadToolRules(file);
    expect(classifyHttp(call('GET', 'http://h/flights?to=DEN'), rules)).toMatchObject({
      stateType: 'RETRIEVE',
      name: 'search_flights',
    });
    writeFileSync(file, 'rules:\n  - match: { verb: GET }\n    stateType: RETRIEVE\n');
    expect(() => loadToolRules(file)).toThrow(/rules\[0\]/);
  });

  it('makes a request over stdio and its answer a tool call as MCP over HTTP would be', () => {
    const at = { ts: 1000, end: 1250 };
    const request = { method: 'tools/call', params: { name: 'lookup', arguments: { q: 'x' } } };
    const store = (json: string) => ({ size: json.length, blob: `sha256:${json.length}` });
    expect(stdioRpcCall({ ...at, request, response: { result: { ok: 1 } } }, [], store)).toEqual({
      kind: 'mcp',
      name: 'lookup',
      stateType: 'MCP_CALL',
      args: { q: 'x' },
      mutating: true,
      result: { ok: 1 },
      latencyMs: 250,
    });
    // A JSON-RPC error, and no answer at all (the server ended first).
    expect(
      stdioRpcCall({ ...at, request, response: { error: { code: -32602, message: 'bad params' } } }, [], store).error,
    ).toEqual({ code: '-32602', message: 'bad params' });
    expect(stdioRpcCall({ ...at, request }, [], store).error?.code).toBe('NO_RESPONSE');
    // Protocol chatter; a large result goes to a body; the user's rules apply by rpcMethod.
    expect(
      stdioRpcCall({ ...at, request: { method: 'tools/list' }, response: { result: {} } }, [], store),
    ).toMatchObject({ name: 'mcp tools/list', stateType: 'OBSERVE', mutating: false });
    const big = stdioRpcCall({ ...at, request, response: { result: { text: 'x'.repeat(100) } } }, [], store, 50);
    expect(big.result).toBeUndefined();
    expect(big.resultBody).toEqual({ size: 111, blob: 'sha256:111' });
    const rules = [{ match: { rpcMethod: 'tools/call' }, stateType: 'RETRIEVE' as const, mutating: false }];
    expect(stdioRpcCall({ ...at, request, response: { result: {} } }, rules, store)).toMatchObject({
      name: 'lookup',
      stateType: 'RETRIEVE',
      mutating: false,
    });
  });

  it("tells the agent's telemetry from its tools", () => {
    const post = (url: string, headers: Record<string, string> = {}) => ({ method: 'POST', url, headers });
    for (const call of [
      post('http://collector:4318/v1/traces'),
      post('https://otel.example.com/api/public/otel/v1/metrics'),
      post('http://127.0.0.1:9/v1/logs/'),
      post('https://api.openai.com/v1/traces/ingest'),
      post('https://cloud.langfuse.com/api/public/ingestion'),
      post('https://o1.ingest.sentry.io/api/42/envelope/'),
      { method: 'GET', url: 'http://smith.internal/info', headers: { 'User-Agent': 'langsmith-js/0.12.0' } },
      post('http://anywhere/x', { 'user-agent': 'OTel-OTLP-Exporter-JavaScript/0.57.0' }),
    ])
      expect(isTelemetry(call), call.url).toBe(true);
    for (const call of [
      { method: 'GET', url: 'http://collector:4318/v1/traces', headers: {} },
      post('http://api/v1/chat/completions'),
      post('http://api/refunds', { 'user-agent': 'axios/1.7' }),
      post('http://api/v1/traces/123'),
    ])
      expect(isTelemetry(call), call.url).toBe(false);
    expect(classifyHttp(call('POST', 'http://collector:4318/v1/traces'))).toEqual({
      kind: 'http',
      name: 'telemetry POST /v1/traces',
      stateType: 'OBSERVE',
      args: {},
      mutating: false,
    });
  });
});
