// A contract's request expectations name what the agent had to look up as well as what it had to
// change ("it checked the forecast before booking"): a request named by method, URL or tool is
// looked for among reads too, while side effects and an unnamed expectation stay the mutating
// requests, and a mutating request keeps its object id whether reads are listed or not.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

const contract = loadContract('examples/contracts/book-flight.yaml');

function run() {
  const b = new RecordingBuilder('reads', 'trace-reads');
  const think = b.model({
    messages: [{ role: 'user', content: 'Check the forecast for Oslo, then note it.' }],
    toolCalls: [{ id: 'c1', name: 'get_forecast', arguments: { city: 'Oslo' } }],
  });
  b.tool(think, {
    name: 'get_forecast',
    args: { city: 'Oslo' },
    result: { city: 'Oslo', sky: 'snow' },
    http: { method: 'GET', url: 'http://127.0.0.1:8931/forecast?city=Oslo' },
  });
  // A search POST that only reads (GraphQL query): a read, not a side effect.
  b.tool(think, {
    name: 'search',
    args: { query: '{ notes { id } }' },
    result: { data: { notes: [] } },
    http: { method: 'POST', url: 'http://127.0.0.1:8931/graphql', body: { query: '{ notes { id } }' } },
  });
  b.tool(think, {
    name: 'save_note',
    args: { text: 'Oslo: snow' },
    result: { id: 7 },
    mutating: true,
    http: { method: 'POST', url: 'http://127.0.0.1:8931/notes', body: { text: 'Oslo: snow' } },
  });
  // A tracer's export: not the agent's work, named or not.
  b.tool(think, {
    name: 'telemetry POST /v1/traces',
    stateType: 'OBSERVE',
    args: {},
    result: {},
    http: { method: 'POST', url: 'http://127.0.0.1:4318/v1/traces', body: { resourceSpans: [] } },
  });
  b.model({ messages: [], text: 'Noted: snow in Oslo.' });
  return b.complete('Noted: snow in Oslo.').build();
}

const evaluate = (requests: NonNullable<typeof contract.expected_state>['requests']) =>
  evaluateRecording(run(), { ...contract, expected_state: { requests, side_effects: 'fail' } });

describe('request expectations', () => {
  it('find the reads they name, and say where', () => {
    const e = evaluate([
      { method: 'GET', url: '/forecast', count: 1, equals: { city: 'Oslo' } },
      { tool: 'search', exists: true },
      { url: '/notes', count: 1 },
      { url: '/v1/traces', absent: true },
    ]);
    expect(e.diff.expectations.map((x) => [x.id, x.passed, x.steps, x.message])).toEqual([
      ['expected_state.requests[0]', true, [2], 'GET /forecast was made: ok'],
      ['expected_state.requests[1]', true, [3], 'search was made: ok'],
      ['expected_state.requests[2]', true, [4], '/notes was made: ok'],
      ['expected_state.requests[3]', true, [], '/v1/traces was not made: ok'],
    ]);
    // The reads are no side effects; the asked-for save is not one either.
    expect(e.diff.sideEffects).toEqual([]);
    expect(e.diff.changes.requests.map((r) => [r.index, r.method, r.target])).toEqual([
      [1, 'POST', 'http://127.0.0.1:8931/notes'],
    ]);
  });

  it('fail a read that must not happen, and a wrong parameter', () => {
    const e = evaluate([
      { url: '/forecast', absent: true },
      { method: 'GET', url: '/forecast', equals: { city: 'Bergen' } },
      { url: '/notes', count: 1 },
    ]);
    expect(e.diff.expectations.map((x) => [x.passed, x.codes, x.message])).toEqual([
      [false, ['UNAUTHORIZED_ACTION'], '/forecast was made at step 2'],
      [
        false,
        ['WRONG_EXECUTION_PARAMETERS'],
        'step 2 GET http://127.0.0.1:8931/forecast?city=Oslo: city="Oslo" (expected "Bergen")',
      ],
      [true, [], '/notes was made: ok'],
    ]);
  });

  it('without a name, count the mutating requests only', () => {
    const e = evaluate([{ count: 1 }]);
    expect(e.diff.expectations.map((x) => [x.passed, x.message])).toEqual([
      [true, 'any mutating request was made: ok'],
    ]);
  });

  it('keep the object id of a mutating request in the state rows', () => {
    const e = evaluate([
      { method: 'GET', url: '/forecast' },
      { url: '/notes', count: 1 },
    ]);
    const ids = e.diff.rows.map((r) => r.stateObjectId).sort();
    expect(ids).toEqual([
      'request:1:POST http://127.0.0.1:8931/notes',
      'request:read 1:GET http://127.0.0.1:8931/forecast?city=Oslo',
    ]);
  });
});
