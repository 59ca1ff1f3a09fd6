// An order desk whose tools use Prisma ORM 7, unchanged by tapedeck: the client Prisma 7's
// `prisma-client` generator wrote (TypeScript, loaded through tsx's register API, as an agent run
// by tsx loads it) over @prisma/adapter-pg (a pg Pool: no engine binary, the query compiler is wasm
// in this process), the model on the openai SDK's Chat Completions. Three tools:
// find_customer reads a customer with its orders and lines (include); get_forecast calls the
// weather API with fetch for the customer's city; place_order runs an interactive $transaction:
// the product row, a stock decrement, and a nested create of the order and its line whose uuid id
// and timestamp Prisma's runtime draws itself (@default(uuid()), @default(now())), with a Decimal
// total and a Json meta. A product out of stock throws inside the transaction: rolled back.
// Env: OPENAI_BASE_URL, OPENAI_API_KEY, WEATHER_URL, DATABASE_URL, SYSTEM_PROMPT.
// Run directly it prints the final text as `FINAL: <text>`; in-process tests import runOrderDesk.

import { fileURLToPath } from 'node:url';
import { PrismaPg } from '@prisma/adapter-pg';
import OpenAI from 'openai';
import { register } from 'tsx/esm/api';

register();
const { PrismaClient } = await import('./prisma/generated/client.ts');

/** The desk's tools over one Prisma client. */
const toolsOf = (prisma) => ({
  async find_customer({ email }) {
    const customer = await prisma.customer.findUnique({
      where: { email },
      include: { orders: { include: { lines: true }, orderBy: { createdAt: 'asc' } } },
    });
    return customer ?? { error: `no customer ${email}` };
  },
  async get_forecast({ city }) {
    const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${encodeURIComponent(city)}`);
    return res.json();
  },
  async place_order({ email, sku, qty }) {
    return prisma.$transaction(async (tx) => {
      const product = await tx.product.findUniqueOrThrow({ where: { sku } });
      if (product.stock < qty) throw new Error(`${sku} has ${product.stock} in stock, ${qty} asked`);
      await tx.product.update({ where: { sku }, data: { stock: { decrement: qty } } });
      return tx.order.create({
        data: {
          customer: { connect: { email } },
          total: product.price.mul(qty),
          meta: { via: 'agent', unitPrice: product.price.toString() },
          lines: { create: [{ sku, qty }] },
        },
        include: { lines: true },
      });
    });
  },
});

const toolSpecs = [
  ['find_customer', 'A customer with their orders.', { email: { type: 'string' } }],
  ['get_forecast', 'The weather forecast for a city.', { city: { type: 'string' } }],
  [
    'place_order',
    'Place an order of a product.',
    { email: { type: 'string' }, sku: { type: 'string' }, qty: { type: 'integer' } },
  ],
].map(([name, description, properties]) => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties, required: Object.keys(properties) } },
}));

/** One conversation with the desk, to its final text; its own Prisma client, disconnected at the end. */
export async function runOrderDesk() {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL }) });
  const tools = toolsOf(prisma);
  const client = new OpenAI({
    baseURL: process.env.OPENAI_BASE_URL,
    apiKey: process.env.OPENAI_API_KEY,
    maxRetries: 0,
  });
  const messages = [
    {
      role: 'system',
      content:
        process.env.SYSTEM_PROMPT ??
        'You are an order desk. Use find_customer, then get_forecast, then place_order, then answer.',
    },
    { role: 'user', content: 'Order 2 keyboards (KB-1) for ada@example.com and tell me when they ship.' },
  ];
  try {
    for (let turn = 0; turn < 6; turn++) {
      const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: toolSpecs });
      const message = completion.choices[0].message;
      messages.push(message);
      if (!message.tool_calls?.length) return message.content;
      for (const call of message.tool_calls) {
        let content;
        try {
          content = JSON.stringify(await tools[call.function.name](JSON.parse(call.function.arguments)));
        } catch (error) {
          content = `Error: ${error.message}`;
        }
        messages.push({ role: 'tool', tool_call_id: call.id, content });
      }
    }
    throw new Error('the desk did not answer in 6 turns');
  } finally {
    await prisma.$disconnect();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(`FINAL: ${await runOrderDesk()}\n`);
