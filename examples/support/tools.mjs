// The support desk's tools: its REST API over fetch. Configured by env (see examples/support/README.md).
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const config = {
  apiUrl: (process.env.SUPPORT_API_URL ?? 'http://127.0.0.1:8788').replace(/\/$/, ''),
  task:
    process.env.SUPPORT_TASK ??
    'Hi, this is Maya Chen (maya.chen@example.com). The blender from my order #7713 arrived cracked. Please refund it.',
  stream: process.argv.includes('--stream') || /^(1|true|yes)$/i.test(process.env.AGENT_STREAM ?? ''),
};

/** The system prompt: env SYSTEM_PROMPT, else the file SYSTEM_PROMPT_FILE, else prompts/careful.txt. */
export async function systemPrompt() {
  if (process.env.SYSTEM_PROMPT) return process.env.SYSTEM_PROMPT;
  const file = process.env.SYSTEM_PROMPT_FILE ?? resolve(here, 'prompts/careful.txt');
  return (await readFile(file, 'utf8')).trim();
}

const str = { type: 'string' };
const int = { type: 'integer' };

/** Tool definitions: name, description, JSON schema of the arguments. */
export const TOOLS = [
  {
    name: 'find_customer',
    description: 'Find the customer account with this email address.',
    parameters: { email: str },
    required: ['email'],
  },
  {
    name: 'get_order',
    description: 'Read an order by its id. Order ids look like O-1234.',
    parameters: { order_id: str },
    required: ['order_id'],
  },
  {
    name: 'list_orders',
    description: "List a customer's orders by customer id (C-...).",
    parameters: { customer_id: str },
    required: ['customer_id'],
  },
  {
    name: 'issue_refund',
    description: 'Refund a delivered order to its original payment method. Amounts are in cents.',
    parameters: { order_id: str, amount_cents: int, reason: str },
    required: ['order_id', 'amount_cents', 'reason'],
  },
  {
    name: 'get_refund',
    description: 'Read a refund by its id (RF-...).',
    parameters: { refund_id: str },
    required: ['refund_id'],
  },
  {
    name: 'search_policies',
    description: "Search the support desk's refund policy.",
    parameters: { query: str },
    required: ['query'],
  },
];

async function api(method, path, body) {
  const res = await fetch(`${config.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return await res.text();
}

const id = (value) => encodeURIComponent(String(value ?? ''));

/** Run one tool; the result is the text handed back to the model (errors included, as JSON). */
export async function runTool(name, args) {
  try {
    switch (name) {
      case 'find_customer':
        return await api('GET', `/customers?${new URLSearchParams({ email: String(args.email ?? '') })}`);
      case 'get_order':
        return await api('GET', `/orders/${id(args.order_id)}`);
      case 'list_orders':
        return await api('GET', `/customers/${id(args.customer_id)}/orders`);
      case 'issue_refund':
        return await api('POST', '/refunds', {
          order_id: args.order_id,
          amount_cents: args.amount_cents,
          reason: args.reason,
        });
      case 'get_refund':
        return await api('GET', `/refunds/${id(args.refund_id)}`);
      case 'search_policies':
        return await api('GET', `/policies?${new URLSearchParams({ q: String(args.query ?? '') })}`);
      default:
        return JSON.stringify({ error: { code: 'unknown_tool', message: `no tool named ${name}` } });
    }
  } catch (err) {
    return JSON.stringify({
      error: { code: 'tool_failed', message: err instanceof Error ? err.message : String(err) },
    });
  }
}

/** Log a line to stderr (the answer alone goes to stdout). */
export function trace(message) {
  process.stderr.write(`[support] ${message}\n`);
}
