// `npm run demo [-- --db postgres://…] [--agent openai|anthropic] [--no-stream]`: start the example
// world, record the agent under the baseline prompt, score it, bisect it, replay it with the fixed
// prompt, score the replay, run the fixed prompt live for comparison, and report. Each phase is one
// function; a capability whose module is not there yet is reported as "not built yet".
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Recording } from '../src/recording/index.js';
import {
  type AgentName,
  type AgentRun,
  CONTRACT,
  EXAMPLES_DIR,
  PROMPTS,
  type PromptName,
  startWorld,
  TRAVELER,
  type World,
  type WorldState,
} from './world/index.js';

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
const notBuilt: string[] = [];

function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Import a capability's module; undefined (and noted) when it is not built yet or fails to load. */
async function capability<T>(name: string, specifier: string): Promise<T | undefined> {
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND') notBuilt.push(name);
    else say(`  (${name} unavailable: ${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
    return undefined;
  }
}

/** Run a phase; a failing capability is reported and the demo goes on. */
async function guard<T>(name: string, phase: () => Promise<T>): Promise<T | undefined> {
  try {
    return await phase();
  } catch (error) {
    say(`  (${name} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
    return undefined;
  }
}

type RecordModule = typeof import('../src/record/index.js');
type RecordingModule = typeof import('../src/recording/index.js');
type BisectModule = typeof import('../src/bisect/index.js');
type ReplayModule = typeof import('../src/replay/index.js');
type LedgerModule = typeof import('../src/ledger/index.js');
type ConfigModule = typeof import('../src/config/index.js');
/** The scorer's API as the brief names it (src/evaluate is not in the tree yet). */
interface EvaluateModule {
  loadContract(fileOrYaml: string): unknown;
  evaluateRecording(
    recording: Recording,
    contract: unknown,
  ): Promise<{ task: Record<string, unknown> }> | { task: Record<string, unknown> };
}

interface Run {
  prompt: PromptName;
  run: AgentRun;
  state: WorldState;
  /** The recording's folder, when the recorder is built. */
  dir?: string;
  recording?: Recording;
}

/** Phase 1: the world (PGlite by default; with --db a fresh database on that server). */
async function phaseWorld(): Promise<World> {
  const world = await startWorld(values.db === undefined ? {} : { db: values.db, freshDatabase: true });
  say(`world: ${world.dbKind} database, travel API ${world.apiUrl}, FAKE model server ${world.modelUrl}`);
  return world;
}

/** Phase 2: run the agent under a prompt from the seed state, recorded when the recorder is built. */
async function phaseRecord(world: World, prompt: PromptName): Promise<Run> {
  await world.reset();
  const rec = await capability<RecordModule>('record', '../src/record/index.js');
  const reader = await capability<RecordingModule>('record', '../src/recording/index.js');
  if (!rec || !reader) {
    const run = await world.runAgent({ agent, stream, prompt });
    if (run.exitCode !== 0) throw new Error(`the ${agent} agent failed (exit ${run.exitCode}):\n${run.stderr}`);
    return { prompt, run, state: await world.state() };
  }
  let stdout = '';
  let stderr = '';
  const result = await rec.recordCommand({
    command: world.agentCommand(agent, { stream }),
    env: world.agentEnv(prompt),
    fsRoot: world.workspace,
    dbUrl: world.dbUrl,
    dbSchemas: ['travel'],
    name: `demo ${agent} ${prompt}`,
    stdio: 'pipe',
    onSpawn: (child) => {
      child.stdout?.on('data', (d: Buffer) => {
        stdout += d.toString('utf8');
      });
      child.stderr?.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
      });
    },
  });
  if (result.exitCode !== 0) throw new Error(`the ${agent} agent failed (exit ${result.exitCode}):\n${stderr}`);
  const run = { exitCode: result.exitCode, answer: stdout.trim(), stdout, stderr };
  return {
    prompt,
    run,
    state: await world.state(),
    dir: result.dir,
    recording: await reader.readRecording(result.dir),
  };
}

/** What the run left in the world, and whether it is what the traveler asked for. */
function phaseReport(result: Run): void {
  const { db, files } = result.state;
  const bookings = db.bookings ?? [];
  const names = new Map((db.passengers ?? []).map((p) => [p.id, p.name]));
  if (result.dir) say(`  recording: ${result.dir} (${stepsOf(result.recording)} steps)`);
  say(`  answer:    ${result.run.answer}`);
  for (const b of bookings) {
    say(
      `  booking:   ${b.id} ${b.status}, flight ${b.flight_id}, $${b.price_usd}, passenger ${b.passenger_id} (${names.get(b.passenger_id)})`,
    );
  }
  for (const path of Object.keys(files).filter((p) => p !== 'traveler.json')) say(`  file:      ${path}`);
  say(`  notes:     ${(db.agent_notes ?? []).length} row(s) in travel.agent_notes`);
  const ok = bookings.length === 1 && bookings[0]?.passenger_id === TRAVELER.passenger_id;
  say(
    ok
      ? `  world:     booked for ${TRAVELER.name} (${TRAVELER.passenger_id}), as asked`
      : `  world:     NOT as asked — the booking is not for ${TRAVELER.name} (${TRAVELER.passenger_id})`,
  );
}

function stepsOf(recording: Recording | undefined): number {
  return recording?.events.filter((e) => e.type === 'step.started').length ?? 0;
}

/** Phase 3: score a recording against the contract (hard gate, failure codes). */
async function phaseScore(recording: Recording | undefined): Promise<void> {
  const evaluate = await capability<EvaluateModule>('score', '../src/evaluate/index.js');
  if (!evaluate || !recording) return;
  const { task } = await evaluate.evaluateRecording(recording, evaluate.loadContract(CONTRACT));
  const hard = task.hardSuccess ?? task.hard_success;
  const codes = task.failureReasonCodes ?? task.failure_reason_codes ?? [];
  say(`  score:     hard gate ${hard ? 'PASS' : 'FAIL'}, failure codes ${JSON.stringify(codes)}`);
}

/** Phase 4: where did the agent's belief part from the world? */
async function phaseBisect(recording: Recording | undefined): Promise<void> {
  const bisect = await capability<BisectModule>('bisect', '../src/bisect/index.js');
  if (!bisect || !recording) return;
  const result = await bisect.bisectBelief(recording, bisect.builtinPredicate('all'));
  if (result.firstBad) {
    say(
      `  bisect:    first divergent step ${result.firstBad.step} (${result.firstBad.stateType}) after ${result.evaluations} probes`,
    );
    say(`             ${result.firstBad.reason}`);
  } else say(`  bisect:    no step where belief and world part (${result.evaluations} probes)`);
}

/** sha256 of a JSON value, shortened: equal digests before and after mean nothing changed. */
function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12);
}

/**
 * Phase 5: replay the baseline recording with the fixed prompt (counterfactual, in the sandbox).
 * The travel API is re-hosted as a sandbox service (examples/tapedeck.config.ts), so the calls the
 * fixed prompt adds are answered against the sandbox database; the real API, database and
 * workspace are checked untouched.
 */
async function phaseReplay(world: World, baseline: Run): Promise<Recording | undefined> {
  const replayer = await capability<ReplayModule>('replay', '../src/replay/index.js');
  const reader = await capability<RecordingModule>('replay', '../src/recording/index.js');
  const configs = await capability<ConfigModule>('replay', '../src/config/index.js');
  if (!replayer || !reader || !configs || !baseline.dir) return undefined;
  const config = configs.withOverrides(await configs.loadConfig({ file: join(EXAMPLES_DIR, 'tapedeck.config.ts') }));
  const before = await world.state();
  const requestsBefore = world.apiRequests();
  const result = await replayer.replay({
    recording: baseline.dir,
    mode: 'counterfactual',
    systemPrompt: await readFile(PROMPTS.fixed, 'utf8'),
    modelEndpoint: world.modelUrl,
    // The recording does not keep the agent's env; give the replay the one the run had.
    env: world.agentEnv('baseline'),
    stdio: 'pipe',
    config: config.config,
  });
  const after = await world.state();
  say(`  replay:    ${result.dir} (${result.status}), first divergent step ${result.firstDivergentStep ?? '-'}`);
  say(`  answer:    ${result.output?.stdout.trim() ?? ''}`);
  say(`  answers:   ${reader.describeProvenance(result.served)}`);
  say(
    `  held back: ${result.heldBack.filter((h) => h.mutating).length} side effect(s) that the replay did not perform`,
  );
  const replayed = await reader.readRecording(result.dir);
  for (const e of replayed.events) {
    if (e.type !== 'db.changed' || e.payload.table !== 'bookings' || e.payload.op !== 'insert') continue;
    const b = e.payload.after ?? {};
    say(
      `  sandbox:   step ${e.stepId} inserted booking ${b.id} for passenger ${b.passenger_id}, flight ${b.flight_id}`,
    );
  }
  say(
    `  real world: API requests during the replay ${world.apiRequests() - requestsBefore}; database ${digest(before.db)} -> ${digest(after.db)}; workspace ${digest(before.files)} -> ${digest(after.files)}`,
  );
  return replayed;
}

/** Phase 6: the token/cost ledger of each recording. */
async function phaseCost(label: string, recording: Recording | undefined): Promise<void> {
  const ledger = await capability<LedgerModule>('ledger', '../src/ledger/index.js');
  if (!ledger || !recording) return;
  const { totals } = ledger.buildLedger(recording);
  const t = totals.tokens as unknown as Record<string, number>;
  const tokens = Object.values(t).reduce((a, b) => a + (typeof b === 'number' ? b : 0), 0);
  say(`  cost ${label.padEnd(9)} $${totals.cost.toFixed(6)} (${tokens} tokens)`);
}

async function main(): Promise<void> {
  const world = await phaseWorld();
  try {
    const mode = `${agent}${stream ? ', streaming' : ''}`;
    say();
    say(`1. baseline prompt (${mode}):`);
    const baseline = await phaseRecord(world, 'baseline');
    phaseReport(baseline);
    await guard('score', () => phaseScore(baseline.recording));
    await guard('bisect', () => phaseBisect(baseline.recording));

    say();
    say('2. the baseline replayed with the fixed prompt (sandbox, no live side effects):');
    const replayed = await guard('replay', () => phaseReplay(world, baseline));
    await guard('score', () => phaseScore(replayed));

    say();
    say(`3. fixed prompt, live (${mode}):`);
    const fixed = await phaseRecord(world, 'fixed');
    phaseReport(fixed);
    await guard('score', () => phaseScore(fixed.recording));
    await guard('bisect', () => phaseBisect(fixed.recording));

    say();
    say('4. cost:');
    await guard('ledger', () => phaseCost('baseline', baseline.recording));
    await guard('ledger', () => phaseCost('replay', replayed));
    await guard('ledger', () => phaseCost('fixed', fixed.recording));

    say();
    const missing = [...new Set(notBuilt)];
    if (missing.length > 0) say(`not built yet: ${missing.join('/')}`);
    if (baseline.dir) say(`open the baseline run in the TUI: npx tapedeck tui ${baseline.dir}`);
  } finally {
    await world.stop();
  }
}

await main();
