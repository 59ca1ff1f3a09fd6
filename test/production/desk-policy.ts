// The stock desk's FAKE model brain (a scripted policy for examples/world's model server, not a
// language model): "Reserve 2 of SKU-00042 for customer 17" -> look the item up, reserve it,
// answer with the order id. Deterministic: the same conversation gets the same reply.
import type { Conversation, Decision } from '../../examples/world/fake-policy.js';
import { parseResult } from '../../examples/world/fake-policy.js';

export function deskPolicy(c: Conversation): Decision {
  const sku = /SKU-\d+/.exec(c.userText)?.[0] ?? 'SKU-00000';
  const qty = Number(/Reserve (\d+)/.exec(c.userText)?.[1] ?? 1);
  const customer = Number(/customer (\d+)/.exec(c.userText)?.[1] ?? 0);
  const lookup = c.calls.find((call) => call.name === 'lookup_item' && call.result !== undefined);
  const reserve = c.calls.find((call) => call.name === 'reserve_item' && call.result !== undefined);
  if (lookup === undefined) {
    return { kind: 'tool_calls', say: `Looking up ${sku}.`, calls: [{ name: 'lookup_item', args: { sku } }] };
  }
  const item = parseResult(lookup.result).value as { id?: string; qty?: number };
  if (reserve === undefined) {
    if (item.id === undefined || (item.qty ?? 0) < qty) return { kind: 'final', text: `${sku} cannot be reserved.` };
    return {
      kind: 'tool_calls',
      say: `Reserving ${qty} of ${sku}.`,
      calls: [{ name: 'reserve_item', args: { item_id: item.id, qty, customer } }],
    };
  }
  const order = parseResult(reserve.result).value as { order_id?: string; left?: number };
  return {
    kind: 'final',
    text: `Reserved ${qty} of ${sku} for customer ${customer}: order ${order.order_id}, ${order.left} left.`,
  };
}
