// A percentage or a remainder the answer works out from amounts it states that observations ground
// (`$89.99, about 78% of your $114.99 order`, `$219 is 8% less than $239`, `so you keep $25.00`) is
// grounded; one that does not follow from them still fails the gate.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

const USER = 'Refund the blender on my order.';
const ORDER = {
  order_id: 'ORD-2026-0042',
  blender_cents: 8999,
  total_cents: 11499,
  fares: [219, 239],
  currency: 'USD',
};

function pass(answer: string): boolean {
  const b = new RecordingBuilder();
  const read = b.model({
    messages: [{ role: 'user', content: USER }],
    toolCalls: [{ id: 'o', name: 'get_order', arguments: {} }],
  });
  b.tool(read, {
    name: 'GET /orders/ORD-2026-0042',
    args: {},
    result: ORDER,
    http: { method: 'GET', url: 'http://127.0.0.1:1/orders/ORD-2026-0042' },
  });
  b.model({ messages: [], text: answer });
  const contract = parseContract(`
task_id: shares
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
`);
  return evaluateRecording(b.complete(answer).build(), contract).task.hardSuccess;
}

describe('worked out in the answer', () => {
  it.each([
    ['The blender ($89.99) is 78% of your $114.99 order.', true],
    ['The blender ($89.99) is about 78% of your $114.99 order.', true],
    ['The blender ($89.99) is 78.3% of your $114.99 order.', true],
    ['The $219 fare is 8% less than the $239 one.', true],
    ['The $219 fare saves you 8.4% off the $239 one.', true],
    ['Refunded $89.99 of $114.99, so you keep $25.00.', true],
    ['Refunded $89.99 of $114.99; the remaining $25.00 stays on the order.', true],
    // Near misses: another share, another remainder, a share nothing in the answer works out.
    ['The blender ($89.99) is 87% of your $114.99 order.', false],
    ['The blender ($89.99) is 78.9% of your $114.99 order.', false],
    ['The $219 fare is 18% less than the $239 one.', false],
    // The gap the other way (before, a share said with no sign of its own: `more` was no direction).
    ['The $219 fare is 8% more than the $239 one.', false],
    ['Refunded $89.99 of $114.99, so you keep $52.00.', false],
    ['Refunded $89.99; the blender is 78% of your order.', false],
    ['Refunded $89.99 of $114.99. Shipping was $25.00.', false],
  ])('%s -> %s', (answer, expected) => {
    expect(pass(answer)).toBe(expected);
  });
});
