import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../test/evaluate/recording-builder.js';
import { linkToolSteps, nameWords, stepNames } from './tool-links.js';

describe('steps named after the decided tool call they answer', () => {
  it('links parallel calls by the values their requests share with the arguments, whatever the order', () => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [
        { id: 'c1', name: 'get_order', arguments: { order_id: 'O-7713' } },
        { id: 'c2', name: 'find_customer', arguments: { email: 'maya.chen@example.com' } },
      ],
    });
    // The customer lookup finishes first; its route shares the email, not the order id.
    b.tool(think, {
      name: 'GET /customers',
      args: { email: 'maya.chen@example.com' },
      http: { method: 'GET', url: 'http://127.0.0.1:1/customers?email=maya.chen%40example.com' },
    });
    b.tool(think, {
      name: 'GET /orders/O-7713',
      args: {},
      http: { method: 'GET', url: 'http://127.0.0.1:1/orders/O-7713' },
    });
    const names = stepNames(b.complete().build().events);
    expect(names.get(2)).toEqual({ name: 'find_customer', route: 'GET /customers', toolCallId: 'c2', thinkStepId: 1 });
    expect(names.get(3)).toEqual({ name: 'get_order', route: 'GET /orders/O-7713', toolCallId: 'c1', thinkStepId: 1 });
    expect(names.get(1)).toEqual({ name: 'fake-model' });
  });

  it('a step that is only world changes (a direct database write) is named by the rows it wrote', () => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [{ id: 'n', name: 'save_note', arguments: { booking_id: 'BK-0001', note: 'ok' } }],
    });
    b.tool(think, {
      name: 'database changes',
      stateType: 'DB_QUERY',
      args: null,
      db: [{ table: 'notes', op: 'insert', key: { id: 'N-1' }, after: { id: 'N-1', booking_id: 'BK-0001' } }],
    });
    expect(stepNames(b.complete().build().events).get(2)).toMatchObject({
      name: 'save_note',
      route: 'database changes',
    });
  });

  it('reads a json/jsonb value held as its text for the values it shares (a row of a recording of today)', () => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [
        { id: 'm', name: 'log_event', arguments: { note: 'early breakfast' } },
        { id: 'n', name: 'log_event', arguments: { note: 'late checkout' } },
      ],
    });
    b.tool(think, {
      name: 'database changes',
      stateType: 'DB_QUERY',
      args: null,
      db: [{ table: 'journal', op: 'insert', key: { id: 7 }, after: { id: 7, data: '{"note": "late checkout"}' } }],
    });
    expect(linkToolSteps(b.complete().build().events).get(2)).toMatchObject({ callId: 'n' });
  });

  it('a step that is only world changes is linked by the values it shares, never by position alone', () => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [
        { id: 'f', name: 'get_forecast', arguments: { city: 'Paris' } },
        { id: 'n', name: 'save_note', arguments: { path: 'notes.txt', text: 'paris: cloudy' } },
      ],
    });
    // Changes found between calls, as the recorder writes them: no call of their own.
    b.tool(think, {
      name: 'file changes',
      stateType: 'FILE_WRITE',
      args: {},
      fs: [{ path: 'cache.db', op: 'create', content: 'x' }],
    });
    b.tool(think, {
      name: 'file changes',
      stateType: 'FILE_WRITE',
      args: {},
      fs: [{ path: 'notes.txt', op: 'modify', content: 'n' }],
    });
    // The forecast call is answered later, by its own step.
    b.tool(think, {
      name: 'GET /forecast',
      args: {},
      http: { method: 'GET', url: 'http://127.0.0.1:1/forecast?city=Paris' },
    });
    const rec = b.complete().build();
    rec.events = rec.events.filter((e) => !(e.type === 'tool.called' && (e.stepId === 2 || e.stepId === 3)));
    const links = linkToolSteps(rec.events);
    expect(links.has(2)).toBe(false);
    expect(links.get(3)).toMatchObject({ callId: 'n', name: 'save_note', route: 'file changes' });
    expect(links.get(4)).toMatchObject({ callId: 'f', name: 'get_forecast' });
  });

  it('the recorded tool-call id wins; protocol chatter is never linked by position alone', () => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [
        { id: 'a', name: 'lookup', arguments: { q: 'x' } },
        { id: 'b', name: 'lookup', arguments: { q: 'x' } },
      ],
    });
    b.tool(think, { name: 'mcp notification stream', stateType: 'OBSERVE', args: {} });
    b.tool(think, { name: 'lookup', args: { q: 'x' } });
    const rec = b.complete().build();
    // As if the recorder had written the id of the second call on step 3.
    const started = rec.events.find((e) => e.type === 'step.started' && e.stepId === 3);
    if (started?.type === 'step.started') started.payload.toolCallId = 'b';
    const links = linkToolSteps(rec.events);
    expect(links.has(2)).toBe(false);
    expect(links.get(3)).toMatchObject({ callId: 'b', name: 'lookup' });
  });

  // Calls made at once often take the same arguments (a SKU, a city): the values cannot tell them
  // apart, the tool's name and the route can. Whichever call came back first, and whichever
  // calls left no step (a database read), each route is named after its own tool.
  it.each([
    ['price first', ['GET /price', 'GET /stock/W-1']],
    ['stock first', ['GET /stock/W-1', 'GET /price']],
    ['stock left no step', ['GET /price']],
  ])('links calls with equal arguments by the words of their names (%s)', (_, routes) => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [
        { id: 's', name: 'lookupStock', arguments: { sku: 'W-1' } },
        { id: 'p', name: 'get_prices', arguments: { sku: 'W-1' } },
      ],
    });
    for (const route of routes) {
      const url = `http://127.0.0.1:1${route.slice(4)}${route.includes('price') ? '?sku=W-1' : ''}`;
      b.tool(think, { name: route, args: {}, http: { method: 'GET', url } });
    }
    const links = linkToolSteps(b.complete().build().events);
    routes.forEach((route, i) => {
      expect(links.get(i + 2)).toMatchObject(
        route.includes('price') ? { callId: 'p', name: 'get_prices' } : { callId: 's', name: 'lookupStock' },
      );
    });
  });

  it('the words of a name break ties only: shared values win, and chatter is never linked by words', () => {
    const b = new RecordingBuilder();
    const think = b.model({
      messages: [],
      toolCalls: [
        { id: 'p', name: 'get_price', arguments: { sku: 'W-2' } },
        { id: 'q', name: 'quote', arguments: { sku: 'W-1' } },
        { id: 'l', name: 'list_tools', arguments: {} },
      ],
    });
    b.tool(think, { name: 'GET /price', args: {}, http: { method: 'GET', url: 'http://127.0.0.1:1/price?sku=W-1' } });
    b.tool(think, { name: 'mcp tools/list', stateType: 'OBSERVE', args: {} });
    const links = linkToolSteps(b.complete().build().events);
    expect(links.get(2)).toMatchObject({ callId: 'q', name: 'quote' });
    expect(links.has(3)).toBe(false);
    expect([...nameWords('GET /v1/prices/{id}')]).toEqual(['price']);
    expect([...nameWords('getStockLevels')]).toEqual(['stock', 'level']);
  });

  // LangGraph's PostgresSaver writes the conversation so far (every call's arguments in it) after
  // each node: its rows share every decided call's values, and are no evidence of any of them.
  it.each(['checkpoints', 'checkpoint_blobs', 'checkpoint_writes'])(
    "a checkpointer's rows (%s) link a step to no tool call; the tool's own rows beside them still do",
    (table) => {
      const b = new RecordingBuilder();
      const think = b.model({
        messages: [],
        toolCalls: [
          { id: 'f', name: 'forecast', arguments: { sku: 'W-1', days: 7 } },
          { id: 'r', name: 'restock', arguments: { sku: 'W-1', qty: 5 } },
        ],
      });
      const saved = { thread_id: 't-1', checkpoint: { sku: 'W-1', days: 7, qty: 5 } };
      b.tool(think, {
        name: 'database changes',
        stateType: 'DB_QUERY',
        args: null,
        db: [{ table, op: 'insert', key: { thread_id: 't-1' }, after: saved }],
      });
      b.tool(think, {
        name: 'database changes',
        stateType: 'DB_QUERY',
        args: null,
        db: [
          { table, op: 'insert', key: { thread_id: 't-1' }, after: saved },
          { table: 'restock_log', op: 'insert', key: { id: 'L-1' }, after: { id: 'L-1', sku: 'W-1', qty: 5 } },
        ],
      });
      // Changes found between calls, as the recorder writes them: no call of their own.
      const rec = b.complete().build();
      rec.events = rec.events.filter((e) => e.type !== 'tool.called');
      const links = linkToolSteps(rec.events);
      expect(links.has(2)).toBe(false);
      expect(links.get(3)).toMatchObject({ callId: 'r', name: 'restock' });
    },
  );
});
