// `tapedeck query "<sql>"`: runs SQL against the evaluation warehouse.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import { openWarehouse, warehouseOptionsFrom } from '../../store/index.js';
import { writeOut } from '../output.js';

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  const text = String(value);
  // Postgres numeric division keeps 20 decimals (0.00907473000000000000): show the digits that matter.
  // Only a run of 3+ trailing zeros is trimmed, so a text value such as "1.50" prints as it is.
  return typeof value === 'string' && /^-?\d+\.\d*000$/.test(text) ? text.replace(/\.?0+$/, '') : text;
}

/** Rows as an aligned text table (numbers right-aligned). */
export function formatRows(fields: string[], rows: Array<Record<string, unknown>>): string {
  const cells = rows.map((r) => fields.map((f) => cell(r[f])));
  const widths = fields.map((f, i) => Math.max(f.length, ...cells.map((c) => (c[i] ?? '').length)));
  const numeric = fields.map(
    (f) =>
      rows.length > 0 &&
      rows.every((r) => r[f] === null || typeof r[f] === 'number' || /^-?\d+(\.\d+)?$/.test(cell(r[f]))),
  );
  const line = (values: string[]): string =>
    values
      .map((v, i) => (numeric[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(fields), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export function register(program: Command): void {
  program
    .command('query')
    .exitOverride(exitOnUsageError)
    .description(
      "Runs SQL on the warehouse that `tapedeck ingest` fills: the seed's tables trace_run, trace_step, trace_context_breakdown, trace_tool_event, trace_price_snapshot, eval_task_result, eval_validator_result, eval_state_result, the view cost_per_resolved_task, and schema_migrations. Several statements may be given; the last one's rows are printed.",
    )
    .argument('<sql>', 'the SQL to run (quote it)')
    .option(
      '--db <url|dir>',
      'postgres:// URL of a server, or a PGlite folder (default: $TAPEDECK_DATABASE_URL, else .tapedeck/warehouse)',
    )
    .option('--json', 'print the rows as a JSON array')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck query "SELECT trace_id, total_tokens, total_cost, currency FROM trace_run ORDER BY created_at"
  tapedeck query "SELECT state_type, sum(state_cost) AS cost FROM trace_step GROUP BY 1 ORDER BY 2 DESC"
  tapedeck query "SELECT tool_name, sum(tokens_sent_to_next_llm)::numeric / nullif(sum(response_tokens_raw), 0) AS tool_context_ratio FROM trace_tool_event GROUP BY 1"
  tapedeck query "SELECT * FROM cost_per_resolved_task" --json`,
    )
    .action(async (sql: string, opts: { db?: string; json?: boolean }) => {
      if (sql.trim() === '')
        throw new TapedeckError('BAD_ARGUMENT', 'the SQL is empty: give a query, e.g. "SELECT * FROM trace_run"');
      const where = warehouseOptionsFrom(opts.db);
      // Querying a folder that does not exist would create an empty warehouse and answer 0 rows: say so instead.
      if (where.dir !== undefined && where.dir !== ':memory:' && !existsSync(where.dir)) {
        throw new TapedeckError(
          'NO_WAREHOUSE',
          `no warehouse at ${where.dir}: fill it first with tapedeck ingest <recordings>${opts.db ? ` --db ${opts.db}` : ''}`,
        );
      }
      const warehouse = await openWarehouse(where);
      try {
        let result: Awaited<ReturnType<typeof warehouse.exec>>;
        try {
          result = await warehouse.exec(sql);
        } catch (error) {
          throw new TapedeckError('QUERY_FAILED', `query failed: ${(error as Error).message}`);
        }
        if (opts.json) {
          writeOut(`${JSON.stringify(result.rows, null, 2)}\n`);
        } else if (result.fields.length === 0) {
          writeOut('ok\n');
        } else {
          writeOut(
            `${formatRows(result.fields, result.rows)}\n(${result.rows.length} row${result.rows.length === 1 ? '' : 's'})\n`,
          );
        }
      } finally {
        await warehouse.close();
      }
    });
}
