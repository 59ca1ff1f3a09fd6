// bench/eval: `tapedeck eval`'s engine (evaluateRecording) on synthetic runs of 1k, 10k and 100k
// steps whose final answer names 5,000 ids and amounts (most observed somewhere in the run, some
// not): the claim check looks each one up in an index of the observations built once, so the
// time per 10k steps stays flat. Target: per-10k time at 100k within 1.5x of that at 10k.
import { evaluateRecording, parseContract } from '../src/evaluate/index.js';
import { syntheticRecording } from '../test/ledger/synthetic.js';

const SIZES = [1_000, 10_000, 100_000];
const CLAIMS = 5_000;

const contract = parseContract(`
task_id: bench_eval
success_criteria:
  required_outputs: [final_answer]
  must_include: [flight]
  must_not_include: [unsupported_claim]
fields: { flight: 'FL\\d+-\\d' }
rules:
  - { id: grounded_ids, tools: [search_flights], args: [from, to] }
`);

/** An answer naming `n` ids and prices; every 10th id was never observed. */
function answer(tools: number): string {
  const parts: string[] = ['Options found:'];
  for (let i = 0; i < CLAIMS; i++) {
    const page = Math.floor((i * 7919) % tools);
    const k = i % 3;
    parts.push(i % 10 === 9 ? `ZZ${i}-9 at $${900_000 + i}` : `FL${page}-${k} at $${200 + k * 15 + page}`);
  }
  return parts.join(', ');
}

function cpu(fn: () => unknown): number {
  const t0 = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

export async function run(): Promise<void> {
  const per10k: number[] = [];
  for (const steps of SIZES) {
    const tools = Math.floor(steps / 2);
    const recording = syntheticRecording({ tools, historyWindow: 6, id: `bench-eval-${steps}`, answer: answer(tools) });
    const rounds = steps >= 100_000 ? 2 : 3;
    const times: number[] = [];
    let unsupported = 0;
    for (let r = 0; r < rounds; r++)
      times.push(
        cpu(() => {
          unsupported = evaluateRecording(recording, contract).findings.filter(
            (f) => f.code === 'UNSUPPORTED_CLAIM',
          ).length;
        }),
      );
    times.sort((a, b) => a - b);
    const min = times[0]!;
    const median = times[Math.floor(times.length / 2)]!;
    per10k.push((min * 10_000) / steps);
    process.stdout.write(
      `eval of ${steps.toLocaleString('en-US')} steps, ${CLAIMS.toLocaleString('en-US')} claims (${unsupported} unsupported): min ${min.toFixed(0)} ms, median ${median.toFixed(0)} ms CPU = ${((min * 10_000) / steps).toFixed(1)} ms per 10k steps\n`,
    );
  }
  const ratio = per10k[2]! / per10k[1]!;
  process.stdout.write(
    `per-10k time, 100k vs 10k: ${ratio.toFixed(2)}x (target <= 1.5x: ${ratio <= 1.5 ? 'met' : 'NOT met'})\n`,
  );
}
