// The stock desk agent: one session reserves items for a customer with the real openai SDK
// (streamed or not), two in-process tools over pg (a keyed read; a transaction that updates the
// item, inserts the order with a client-drawn uuid and clock time, and an audit row with a
// serial id), a shared policy read, and the values it drew reported back. Used in-process by
// desk-server.ts and run on its own by `tapedeck replay` (input from TAPEDECK_RUN_INPUT,
// database from DATABASE_URL).
import OpenAI from 'openai';
import pg from 'pg';

const hook = () => globalThis[Symbol.for('tapedeck.recorder')];
/** tool(name, fn) as tapedeck's: recorded (or, in a replay, served) through the recorder's hook. */
const tool = (name, fn, options) => (args) => {
  const h = hook();
  return h ? h.tool(name, fn, [args], options ?? {}) : fn(args);
};

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'lookup_item',
      description: 'Find an item by SKU',
      parameters: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'reserve_item',
      description: 'Reserve qty of an item for a customer',
      parameters: {
        type: 'object',
        properties: { item_id: { type: 'string' }, qty: { type: 'integer' }, customer: { type: 'integer' } },
        required: ['item_id', 'qty', 'customer'],
      },
    },
  },
];

/** input: { session, sku, qty, customer, stream, modelUrl, secret } */
export async function runDeskSession(pool, input, apiKey) {
  const drawn = { clock: [], random: [], uuid: [] };
  const client = new OpenAI({ baseURL: `${input.modelUrl}/v1`, apiKey, maxRetries: 0 });
  const lookup = tool(
    'lookup_item',
    async ({ sku }) => {
      const { rows } = await pool.query('SELECT id, sku, qty, price FROM desk.items WHERE sku = $1', [sku]);
      return rows[0] ?? { error: 'no such item' };
    },
    { stateType: 'RETRIEVE' },
  );
  const reserve = tool(
    'reserve_item',
    async ({ item_id, qty, customer }) => {
      const orderId = crypto.randomUUID();
      const at = Date.now();
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const left = await c.query('UPDATE desk.items SET qty = qty - $2 WHERE id = $1 RETURNING qty', [item_id, qty]);
        await c.query(
          'INSERT INTO desk.orders (id, item_id, customer_id, qty, placed_at) VALUES ($1, $2, $3, $4, $5)',
          [orderId, item_id, customer, qty, new Date(at)],
        );
        await c.query("INSERT INTO desk.audit (what, order_id) VALUES ('reserve', $1)", [orderId]);
        await c.query('COMMIT');
        return { order_id: orderId, left: left.rows[0].qty };
      } catch (error) {
        await c.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        c.release();
      }
    },
    { stateType: 'API_CALL', mutating: true },
  );
  // The agent's own values: a session id suffix, a start time.
  drawn.uuid.push(crypto.randomUUID());
  drawn.clock.push(Date.now());
  drawn.random.push(Math.random());
  const policy = await pool.query('SELECT id, body FROM desk.policies WHERE id = $1', [1]);
  const messages = [
    { role: 'system', content: `You are the stock desk. ${policy.rows[0]?.body ?? ''}` },
    {
      role: 'user',
      content: `Reserve ${input.qty} of ${input.sku} for customer ${input.customer}. (session ${input.session}, token ${input.secret})`,
    },
  ];
  let answer = '';
  for (let turn = 0; turn < 5; turn++) {
    const reply = input.stream
      ? await streamed(client, messages)
      : (await client.chat.completions.create({ model: 'desk-1', messages, tools: TOOLS })).choices[0].message;
    messages.push(reply);
    if (!reply.tool_calls?.length) {
      answer = reply.content ?? '';
      break;
    }
    for (const call of reply.tool_calls) {
      const args = JSON.parse(call.function.arguments);
      const result = call.function.name === 'lookup_item' ? await lookup(args) : await reserve(args);
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
    drawn.clock.push(Date.now());
  }
  return { answer, drawn };
}

async function streamed(client, messages) {
  const stream = await client.chat.completions.create({ model: 'desk-1', messages, tools: TOOLS, stream: true });
  const message = { role: 'assistant', content: '', tool_calls: [] };
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta ?? {};
    if (delta.content) message.content += delta.content;
    for (const tc of delta.tool_calls ?? []) {
      const slot = (message.tool_calls[tc.index] ??= {
        id: '',
        type: 'function',
        function: { name: '', arguments: '' },
      });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.function.name += tc.function.name;
      if (tc.function?.arguments) slot.function.arguments += tc.function.arguments;
    }
  }
  if (message.tool_calls.length === 0) delete message.tool_calls;
  return message;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  // runInput()'s work, without importing tapedeck: the run starts here (its recorded values are
  // handed out from this point; what the command drew loading its modules was its own).
  hook()?.runStarts?.();
  const input = JSON.parse(process.env.TAPEDECK_RUN_INPUT ?? '{}');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  const out = await runDeskSession(pool, input, process.env.OPENAI_API_KEY ?? 'none');
  await pool.end();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
