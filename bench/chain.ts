// The answer chain's cost: a sandbox service per replay and per bisect-prompt probe. The support
// desk's careful and careless runs are recorded; then, in the same run, the median wall time of
// the same agent trajectory (the careful prompt) replayed three ways:
//   (a) from the careful recording: every call recorded, no service needed (the baseline),
//   (b) from the careless recording, its two unrecorded calls answered by the desk API started as a
//       sandbox service for that replay (what `tapedeck replay` does),
//   (c) the same with one kept service (what each bisect-prompt probe does: a fresh database each),
// printed as ratios to (a).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SUPPORT_PROMPTS, type SupportPromptName, startSupportWorld } from '../examples/support/index.js';
import { loadConfig, withOverrides } from '../src/config/index.js';
import { recordCommand } from '../src/record/index.js';
import { createAnswerChain, type ReplayOptions, replay } from '../src/replay/index.js';

const CONFIG = fileURLToPath(new URL('../examples/support/tapedeck.config.ts', import.meta.url));
const RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function run(): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-bench-chain-'));
  const world = await startSupportWorld();
  try {
    const record = async (prompt: SupportPromptName) =>
      (
        await recordCommand({
          command: world.agentCommand(),
          env: world.agentEnv(prompt),
          dbUrl: world.dbUrl,
          dbSchemas: world.dbSchemas,
          out: path.join(tmp, prompt),
          stdio: 'ignore',
        })
      ).dir;
    const carefulRun = await record('careful');
    await world.reset();
    const carelessRun = await record('careless');
    const { config } = withOverrides(await loadConfig({ file: CONFIG }));
    const careful = await readFile(SUPPORT_PROMPTS.careful, 'utf8');
    let n = 0;
    const once = (recording: string, extra: Partial<ReplayOptions>) =>
      replay({
        recording,
        mode: 'counterfactual',
        systemPrompt: careful,
        env: world.agentEnv('careful'),
        out: path.join(tmp, `r${n++}`),
        stdio: 'ignore',
        ...extra,
      });
    // Warm-up: the PGlite runtime, tsx's compile cache, the service's first start.
    await once(carelessRun, { config });
    const plain: number[] = [];
    const withService: number[] = [];
    const probes: number[] = [];
    const chain = createAnswerChain(config, { keep: true });
    try {
      for (let i = 0; i < RUNS; i++) {
        plain.push(await timed(() => once(carefulRun, {})));
        withService.push(await timed(() => once(carelessRun, { config })));
        probes.push(await timed(() => once(carelessRun, { chain })));
      }
    } finally {
      await chain.close();
    }
    const a = median(plain);
    const b = median(withService);
    const c = median(probes);
    const line = (label: string, ms: number) =>
      `  ${label.padEnd(58)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / a).toFixed(2)}x`;
    process.stdout.write(
      [
        `support desk, the careful trajectory replayed; medians of ${RUNS}`,
        line('(a) every call recorded, no service (baseline)', a),
        line('(b) 2 calls answered by a service started for the replay', b),
        line('(c) the same, service kept across replays (a probe)', c),
        `  added by the service: ${(b - a).toFixed(0)} ms per replay (${((b - a) / a).toFixed(2)}x), ${(c - a).toFixed(0)} ms per kept-service probe (${((c - a) / a).toFixed(2)}x)`,
        '',
      ].join('\n'),
    );
  } finally {
    await world.stop();
    await rm(tmp, { recursive: true, force: true });
  }
}
