// The support desk's FAKE model brain: a deterministic scripted policy, not a language model. It
// reads the system prompt's rules, the customer's message and the tool results so far, and picks
// the next tool calls or the final answer. The customer types "my order #7713" (their order is
// O-7731): a prompt that asks to check the order belongs to the customer finds the right one; a
// prompt without that line refunds whatever order the typed number names.
import {
  type Conversation,
  type Decision,
  errorMessage,
  moves,
  type PlannedCall,
  parseResult,
} from '../world/fake-policy.js';

/** The rules a system prompt switches on; each is one line of prompts/careful.txt. */
export interface SupportRules {
  /** "check that the order belongs to the customer …": without it the model refunds the order the number names. */
  verifyOwner: boolean;
  /** "check the refund policy": search_policies before refunding. */
  checkPolicy: boolean;
  /** "verify the refund": get_refund after refunding. */
  verifyRefund: boolean;
}

export function readSupportRules(system: string): SupportRules {
  const s = system.toLowerCase().replace(/\s+/g, ' ');
  return {
    verifyOwner: s.includes('order belongs to the customer'),
    checkPolicy: s.includes('check the refund policy'),
    verifyRefund: s.includes('verify the refund'),
  };
}

interface SupportTask {
  email: string | null;
  /** The digits of the order number the customer typed ("#7713", "order 7713", "O-7713"). */
  orderDigits: string | null;
  /** What went wrong, in the customer's words ("arrived cracked"). */
  reason: string;
  words: Set<string>;
}

export function parseSupportTask(text: string): SupportTask {
  const email = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text)?.[0] ?? null;
  const order = /(?:#\s*|\border\s+(?:number\s+|no\.?\s*)?#?\s*)(?:[A-Za-z]-?)?(\d{3,})/i.exec(text);
  const arrived = /\barrived\s+([a-z]+)/i.exec(text)?.[1];
  return {
    email,
    orderDigits: order?.[1] ?? null,
    reason: arrived ? `arrived ${arrived.toLowerCase()}` : 'customer request',
    words: new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []),
  };
}

type Obj = Record<string, unknown>;

interface Order {
  id: string;
  customer_id: string;
  item: string;
  total_cents: number;
  status: string;
  delivered_at: string | null;
}

/** 12999 -> "$129.99": the model speaks dollars, the API counts cents. */
export function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "2026-11-20T14:05:00Z" -> "Nov 20". */
function shortDate(iso: string | null): string {
  const m = /^\d{4}-(\d{2})-(\d{2})/.exec(iso ?? '');
  return m ? `${MONTHS[Number(m[1]) - 1]} ${Number(m[2])}` : 'recently';
}

/** The order the customer means among their own: the item they named, else the typed number with digits swapped. */
function meant(orders: Order[], task: SupportTask): Order | undefined {
  const delivered = orders.filter((o) => o.status === 'delivered');
  const byItem = delivered.filter((o) =>
    o.item
      .toLowerCase()
      .split(/\s+/)
      .some((w) => task.words.has(w)),
  );
  if (byItem.length === 1) return byItem[0];
  const sorted = (s: string) => [...s].sort().join('');
  const digits = task.orderDigits === null ? '' : sorted(task.orderDigits);
  const bySwap = delivered.filter((o) => sorted(o.id.replace(/\D/g, '')) === digits);
  return bySwap.length === 1 ? bySwap[0] : undefined;
}

/** The next move, given everything the model can see. Pure and deterministic. */
export function decideSupport(c: Conversation): Decision {
  const rules = readSupportRules(c.system);
  const task = parseSupportTask(c.userText);
  const { done, call } = moves(c);

  if (task.email === null) return { kind: 'final', text: 'Could you give me the email address on your account?' };
  if (task.orderDigits === null) return { kind: 'final', text: 'Which order is it? The number is in your receipt.' };
  // The model knows the API's id format from the tool description: "#7713" is O-7713.
  const typed = `O-${task.orderDigits}`;

  const customerLookup = done('find_customer');
  const orderLookup = done('get_order', (x) => x.args.order_id === typed);
  const policy = done('search_policies');
  const needed: PlannedCall[] = [];
  if (!customerLookup) needed.push({ name: 'find_customer', args: { email: task.email } });
  if (!orderLookup) needed.push({ name: 'get_order', args: { order_id: typed } });
  if (rules.checkPolicy && !policy) needed.push({ name: 'search_policies', args: { query: 'refund damaged owner' } });
  if (needed.length > 0) return call(`Looking up your account and order #${task.orderDigits}.`, ...needed);

  const found = parseResult(customerLookup?.result);
  const customer = ((found.value.customers ?? []) as Obj[])[0];
  if (!found.ok || customer === undefined) {
    return { kind: 'final', text: `I could not find an account for ${task.email}. Could you check the address?` };
  }
  const customerId = String(customer.id);
  const looked = parseResult(orderLookup?.result);
  let target: Order | undefined = looked.ok ? (looked.value.order as Order) : undefined;
  let note = '';
  if (rules.verifyOwner && target?.customer_id !== customerId) {
    const list = done('list_orders', (x) => x.args.customer_id === customerId);
    if (!list) {
      return call(`Order #${task.orderDigits} is not on your account; checking your orders.`, {
        name: 'list_orders',
        args: { customer_id: customerId },
      });
    }
    const listed = parseResult(list.result);
    target = listed.ok ? meant((listed.value.orders ?? []) as Order[], task) : undefined;
    if (target === undefined) {
      return {
        kind: 'final',
        text: `Order #${task.orderDigits} is not on your account, and none of your orders matches it. Could you check the number on your receipt?`,
      };
    }
    note = ` Order #${task.orderDigits} is not on your account, so I refunded your order ${target.id} instead.`;
  }
  if (target === undefined) {
    return { kind: 'final', text: `I could not find order #${task.orderDigits}: ${errorMessage(looked.value)}.` };
  }

  const refunded = done('issue_refund');
  if (!refunded) {
    return call(`Refunding ${dollars(target.total_cents)} for order ${target.id}.`, {
      name: 'issue_refund',
      args: { order_id: target.id, amount_cents: target.total_cents, reason: task.reason },
    });
  }
  const result = parseResult(refunded.result);
  if (!result.ok)
    return { kind: 'final', text: `I could not refund order ${target.id}: ${errorMessage(result.value)}.` };
  const refund = result.value.refund as Obj;
  const refundId = String(refund.id);
  if (rules.verifyRefund && !done('get_refund')) {
    return call(`Verifying refund ${refundId}.`, { name: 'get_refund', args: { refund_id: refundId } });
  }
  const policyLine = policy ? ' It reaches your original payment method within 5 business days.' : '';
  return {
    kind: 'final',
    text: `Refunded ${dollars(Number(refund.amount_cents))} for your ${target.item} (order ${target.id}, delivered ${shortDate(target.delivered_at)}) — refund ${refundId} is ${String(refund.status)}.${note}${policyLine}`,
  };
}
