// `tapedeck ledger <recording>`: what a run (or a replay) cost — per step, by token type, by
// state — with the seed's metrics and cost profile; re-cost under another price table or model.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  buildLedger,
  compareLedgers,
  formatCostDelta,
  formatLedger,
  type Ledger,
  type LedgerOptions,
  loadPrices,
} from '../../ledger/index.js';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { listRecordings, readRecording } from '../../recording/reader.js';
import type { Recording } from '../../recording/types.js';
import { writeOut } from '../output.js';
import { readGivenRecording } from '../read-recording.js';

interface LedgerCliOptions {
  json?: boolean;
  profile?: boolean;
  prices?: string;
  model?: string;
  baseline?: string;
  provenance: boolean;
}

/** Finds the recording a replay was made from: a path, a sibling folder, or an id under the same root. */
export async function findBaseline(replay: Recording, roots: string[] = []): Promise<string | undefined> {
  const of = replay.manifest.replayOf;
  if (!of) return undefined;
  const parent = dirname(resolve(replay.dir));
  const candidates = isAbsolute(of) ? [of] : [resolve(of), join(parent, of), ...roots.map((r) => join(r, of))];
  for (const c of candidates) if (existsSync(join(c, 'manifest.json'))) return c;
  for (const root of [parent, ...roots]) {
    if (!existsSync(root)) continue;
    const found = (await listRecordings(root)).find((r) => r.manifest.id === of);
    if (found) return found.dir;
  }
  return undefined;
}

export function register(program: Command): void {
  program
    .command('ledger')
    .exitOverride(exitOnUsageError)
    .description(
      "Builds the run's ledger from its recording: each step's tokens in separate buckets (uncached input, cache read, cache write, output, reasoning — the provider's reported usage, never double counted), its LLM cost from the price snapshot, tool/compute cost where the price table has one, latency; totals and cost by state type; the input of every model call split by context source (system prompt, skill instructions and tool specs, user instruction, history, memory, tool results, retrieved context, artifacts); which tool results entered the next model context; and the derived metrics (cache hit ratio, cache saving, state cost share, tool context ratio, input amplification, validation repair rate, refinement efficiency, retrieval compression) with a plain-language conclusion. Prices come from the recording's snapshot, else the bundled table; --prices and --model re-cost the same run. For a replay it shows recorded, replay and live cost side by side and the delta against its baseline.",
    )
    .argument('<recording>', 'a recording (or replay) folder, or <store>/<id> (pg://…, file://…, s3://…)')
    .option(
      '--json',
      'print the ledger as JSON: the seed rows (run, steps, context, tools, prices), per-step detail (token buckets, cost by token type, recorded/replay/live cost), byState, metrics, costProfile, replay, delta',
    )
    .option('--profile', 'print only the cost profile JSON (seed §24)')
    .option(
      '--prices <file>',
      'price table JSON to cost with instead of the snapshot: {version, currency, models: [...], tools?: [...]}',
    )
    .option('--model <model>', 'cost every model call as if made with this model')
    .option(
      '--baseline <recording>',
      'baseline recording to compare with (default for a replay: the recording it replays, when found)',
    )
    .option('--no-provenance', 'skip the context-provenance split (faster on huge recordings)')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck ledger recordings/examples/openai-baseline
  tapedeck ledger recordings/examples/openai-baseline --model claude-sonnet-4-5     what would it cost on Sonnet?
  tapedeck ledger recordings/examples/openai-baseline --prices prices-2027.json --json
  tapedeck ledger recordings/<replay> --baseline recordings/examples/openai-baseline
  tapedeck ledger recordings/examples/openai-baseline --profile | jq .conclusion

A price table file:
  {"version": "2027-01-01", "currency": "USD",
   "models": [{"model": "gpt-4.1-mini", "inputPerMillion": 0.4, "cachedInputPerMillion": 0.1,
               "outputPerMillion": 1.6, "cacheWritePerMillion": 0.4, "reasoningPerMillion": 1.6}],
   "tools": [{"tool": "GET /flights*", "perCall": 0.001}]}
Model names match exactly, or by prefix at a '-' boundary (gpt-4o-2024-08-06 is priced as gpt-4o).
Input tokens = uncached + cache read + cache write; "cached" in the seed's columns means cache read.`,
    )
    .action(async (dir: string, opts: LedgerCliOptions) => {
      const options: LedgerOptions = { provenance: opts.provenance };
      if (opts.prices) options.prices = loadPrices(opts.prices);
      if (opts.model) options.model = opts.model;
      // The ledger is the events' alone: the world snapshots are not read (nor their schemas loaded).
      const recording = await readGivenRecording(dir, { world: false });
      const ledger = buildLedger(recording, options);
      if (opts.model && !ledger.prices.length && ledger.steps.some((s) => s.model_name)) {
        throw new TapedeckError(
          'UNKNOWN_MODEL',
          `no price for model ${opts.model} in price table ${ledger.priceVersion}; give one with --prices FILE`,
        );
      }
      let baselineDir = opts.baseline;
      let note: string | undefined;
      if (!baselineDir && recording.manifest.replayOf) {
        baselineDir = await findBaseline(recording, ['recordings', 'recordings/examples']);
        if (!baselineDir)
          note = `baseline ${recording.manifest.replayOf} not found; pass --baseline <recording> for the cost delta`;
      }
      let baseline: Ledger | undefined;
      if (baselineDir) {
        // Both sides at the same prices, or the delta would compare price tables instead of runs.
        baseline = buildLedger(await readRecording(baselineDir, { world: false }), {
          ...options,
          prices: ledger.priceTable,
        });
      }
      const delta = baseline ? compareLedgers(baseline, ledger) : undefined;
      if (opts.profile) {
        writeOut(`${JSON.stringify(ledger.costProfile, null, 2)}\n`);
        return;
      }
      if (opts.json) {
        writeOut(`${JSON.stringify({ ...ledger, ...(delta ? { delta } : {}) }, null, 2)}\n`);
        return;
      }
      const lines = [formatLedger(ledger, recording.manifest.name || recording.manifest.id)];
      if (delta) lines.push('', formatCostDelta(delta));
      if (note) lines.push('', note);
      writeOut(`${lines.join('\n')}\n`);
    });
}
