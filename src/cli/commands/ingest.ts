// `tapedeck ingest <recording…>`: loads recordings' ledgers and their scores into the warehouse.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { type LedgerOptions, loadPrices } from '../../ledger/index.js';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { listRecordings, readRecording } from '../../recording/index.js';
import type { Recording } from '../../recording/types.js';
import {
  type IngestResult,
  loadScores,
  normalizeScores,
  openWarehouse,
  type Scores,
  scoresTraceId,
  warehouseOptionsFrom,
} from '../../store/index.js';
import { isStoreUrl, localRecording } from '../../store/recordings/index.js';
import { writeErr, writeOut } from '../output.js';
import { printWarnings } from '../read-recording.js';

interface IngestCliOptions {
  scores?: string;
  contract?: string;
  db?: string;
  prices?: string;
  json?: boolean;
}

/** A folder with a manifest is a recording; any other folder stands for the recordings under it. */
async function expand(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    if (isStoreUrl(p)) out.push(await localRecording(p));
    else if (existsSync(join(p, 'manifest.json'))) out.push(p);
    else if (existsSync(p)) {
      const found = await listRecordings(p);
      if (found.length === 0) throw new TapedeckError('NO_RECORDINGS', `${p} is not a recording and holds none`);
      out.push(...found.map((r) => r.dir));
    } else throw new TapedeckError('NOT_FOUND', `no recording at ${p}`);
  }
  return out;
}

export function register(program: Command): void {
  program
    .command('ingest')
    .exitOverride(exitOnUsageError)
    .description(
      "Builds each recording's ledger and stores it in the seed's tables — trace_run, trace_step, trace_context_breakdown, trace_tool_event, trace_price_snapshot — with its scores in eval_task_result, eval_validator_result and eval_state_result. The warehouse is embedded PGlite in .tapedeck/warehouse unless --db or TAPEDECK_DATABASE_URL names a Postgres server (or another folder); its schema is migrated on open. Ingesting is idempotent: a recording ingested again replaces its own rows with identical ones, so nothing changes.",
    )
    .argument(
      '<recordings...>',
      'recording folders, folders of recordings, or <store>/<id> URLs (pg://…, file://…, s3://…)',
    )
    .option(
      '--scores <file>',
      "scores JSON: {task, validators, state} as the outcome engine returns them (camelCase or the seed's snake_case), or a list of them matched to recordings by trace id",
    )
    .option(
      '--db <url|dir>',
      'postgres:// URL of a server, or a PGlite folder (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option(
      '--contract <file>',
      'evaluate each recording against this eval contract (YAML) and store the result as its scores',
    )
    .option('--prices <file>', "price table to cost with instead of each recording's snapshot")
    .option('--json', 'print what was stored as JSON')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck ingest recordings/examples
  tapedeck ingest recordings/run-1 --scores run-1.scores.json
  tapedeck ingest recordings/examples --contract examples/contracts/book-flight.yaml
  tapedeck ingest recordings/* --db postgres://postgres@127.0.0.1:5432/evals
  tapedeck query "SELECT trace_id, total_cost FROM trace_run"`,
    )
    .action(async (paths: string[], opts: IngestCliOptions) => {
      const options: LedgerOptions = {};
      if (opts.prices) options.prices = loadPrices(opts.prices);
      if (opts.scores && opts.contract) {
        throw new TapedeckError('BAD_OPTION', 'give --scores or --contract, not both');
      }
      const scores = opts.scores ? loadScores(opts.scores) : [];
      const dirs = await expand(paths);
      const recordings = [];
      for (const dir of dirs) {
        const recording = await readRecording(dir);
        printWarnings(dir, recording);
        recordings.push(recording);
      }
      const matched = new Set<Scores>();
      const scoresFor = (ids: string[]): Scores[] => {
        const mine = scores.filter((s) => {
          const id = scoresTraceId(s);
          return id !== undefined && ids.includes(id);
        });
        if (mine.length === 0 && recordings.length === 1) return scores.filter((s) => scoresTraceId(s) === undefined);
        return mine;
      };
      let evaluate: ((recording: Recording) => unknown) | undefined;
      if (opts.contract) {
        const { evaluateRecording, loadContract } = await import('../../evaluate/index.js');
        const contract = loadContract(opts.contract);
        evaluate = (recording) => evaluateRecording(recording, contract);
      }
      const warehouse = await openWarehouse(warehouseOptionsFrom(opts.db));
      const results: IngestResult[] = [];
      try {
        for (const recording of recordings) {
          const ids = [recording.events[0]?.traceId ?? recording.manifest.id, recording.manifest.id];
          const own = evaluate ? [normalizeScores(evaluate(recording))] : scoresFor(ids);
          for (const s of own) matched.add(s);
          results.push(await warehouse.ingest(recording, own, options));
        }
      } finally {
        await warehouse.close();
      }
      const unmatched = scores.filter((s) => !matched.has(s)).length;
      if (opts.json) {
        writeOut(
          `${JSON.stringify({ warehouse: warehouse.location, results, unmatchedScores: unmatched }, null, 2)}\n`,
        );
        return;
      }
      for (const r of results) {
        // One line per recording, then its row counts wrapped under it (80 columns).
        const counts = Object.entries(r.rows)
          .filter(([, n]) => n > 0)
          .map(([t, n]) => `${n} ${t}`);
        const lines = [`ingested ${r.recordingId} (trace ${r.traceId})`];
        let line = '  rows:';
        for (const [i, c] of counts.entries()) {
          const part = `${c}${i < counts.length - 1 ? ',' : ''}`;
          if (line.length + 1 + part.length > 80) {
            lines.push(line);
            line = `       ${part}`;
          } else line = `${line} ${part}`;
        }
        lines.push(line);
        writeOut(`${lines.join('\n')}\n`);
      }
      writeOut(`warehouse: ${warehouse.kind} ${warehouse.location}\n`);
      if (unmatched > 0) {
        writeErr(
          `tapedeck: ${unmatched} score entr${unmatched === 1 ? 'y' : 'ies'} matched no ingested recording (by trace id)\n`,
        );
      }
    });
}
