// `npm run demo [-- --db postgres://…] [--agent openai|anthropic] [--no-stream]`: start the example
// world, run the agent under the baseline prompt and under the fixed prompt, and report what
// happened. Each phase is one function so the recorder, scorer, bisect and replayer slot in.
import { parseArgs } from 'node:util';
import {
  type AgentName,
  type AgentRun,
  type PromptName,
  startWorld,
  TRAVELER,
  type World,
  type WorldState,
} from './world/index.js';

interface RunResult {
  prompt: PromptName;
  run: AgentRun;
  state: WorldState;
  tokens: { input: number; cached: number; output: number };
}

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    agent: { type: 'string', default: 'openai' },
    'no-stream': { type: 'boolean', default: false },
  },
});
const agent = values.agent as AgentName;
if (agent !== 'openai' && agent !== 'anthropic') {
  process.stderr.write(`--agent must be openai or anthropic, not ${values.agent}\n`);
  process.exit(2);
}
const stream = !values['no-stream'];

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Phase 1: the world (PGlite by default; with --db a fresh database on that server). */
async function phaseWorld(): Promise<World> {
  const world = await startWorld(values.db === undefined ? {} : { db: values.db, freshDatabase: true });
  say(`world: ${world.dbKind} database, API ${world.apiUrl}, FAKE model ${world.modelUrl}`);
  say(`       workspace ${world.workspace}`);
  return world;
}

/** Phase 2/5: run the agent under a prompt from the seed state. (Recording: not built yet.) */
async function phaseRun(world: World, prompt: PromptName): Promise<RunResult> {
  await world.reset();
  const run = await world.runAgent({ agent, stream, prompt });
  if (run.exitCode !== 0) throw new Error(`the ${agent} agent failed (exit ${run.exitCode}):\n${run.stderr}`);
  return { prompt, run, state: await world.state(), tokens: usageOf(world.modelLog()) };
}

/** Token totals from the fake model's log (the ledger will replace this). */
function usageOf(log: string[]): RunResult['tokens'] {
  const total = { input: 0, cached: 0, output: 0 };
  for (const line of log) {
    const entry = JSON.parse(line) as { response: { usage?: Record<string, number>; sse?: string } };
    // Usage as the provider reports it: the JSON body, or merged from the SSE events.
    let u: Record<string, unknown> | undefined = entry.response.usage;
    for (const line of (entry.response.sse ?? '').split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const event = JSON.parse(line.slice(6)) as { usage?: object; message?: { usage?: object } };
      const part = event.usage ?? event.message?.usage;
      if (part) u = { ...u, ...part };
    }
    if (!u) continue;
    if (typeof u.prompt_tokens === 'number') {
      total.input += u.prompt_tokens;
      total.cached += Number((u.prompt_tokens_details as Record<string, number> | undefined)?.cached_tokens ?? 0);
      total.output += Number(u.completion_tokens ?? 0);
    } else {
      total.input +=
        Number(u.input_tokens ?? 0) +
        Number(u.cache_read_input_tokens ?? 0) +
        Number(u.cache_creation_input_tokens ?? 0);
      total.cached += Number(u.cache_read_input_tokens ?? 0);
      total.output += Number(u.output_tokens ?? 0);
    }
  }
  return total;
}

/** What the run left behind, and whether it is what the traveler asked for. */
function report(result: RunResult): boolean {
  const { db, files } = result.state;
  const bookings = db.bookings ?? [];
  const passengers = new Map((db.passengers ?? []).map((p) => [p.id, p.name]));
  say(`  answer:   ${result.run.answer}`);
  for (const b of bookings) {
    say(
      `  booking:  ${b.id} ${b.status} flight ${b.flight_id} $${b.price_usd} passenger ${b.passenger_id} (${passengers.get(b.passenger_id)})`,
    );
  }
  for (const path of Object.keys(files).filter((p) => p !== 'traveler.json')) say(`  file:     ${path}`);
  say(`  notes:    ${(db.agent_notes ?? []).length} row(s) in travel.agent_notes`);
  say(`  tokens:   ${result.tokens.input} input (${result.tokens.cached} cached), ${result.tokens.output} output`);
  const ok =
    bookings.length === 1 &&
    bookings[0]?.passenger_id === TRAVELER.passenger_id &&
    Number(bookings[0]?.price_usd) <= 300;
  say(
    ok
      ? `  world:    booked for ${TRAVELER.name} (${TRAVELER.passenger_id}) within budget`
      : `  world:    NOT what was asked — the booking is not for ${TRAVELER.name} (${TRAVELER.passenger_id})`,
  );
  return ok;
}

const NOT_BUILT = ['record', 'score', 'bisect', 'replay'];

async function main(): Promise<void> {
  const world = await phaseWorld();
  try {
    say();
    say(`baseline prompt (${agent}${stream ? ', streaming' : ''}):`);
    const baseline = await phaseRun(world, 'baseline');
    const baselineOk = report(baseline);
    if (!baselineOk) say('  known divergence: step 3 (THINK) books passenger P-100, an id no tool returned');

    say();
    say(`fixed prompt (${agent}${stream ? ', streaming' : ''}):`);
    const fixed = await phaseRun(world, 'fixed');
    report(fixed);

    say();
    say(`not built yet: ${NOT_BUILT.join('/')}`);
  } finally {
    await world.stop();
  }
}

await main();
