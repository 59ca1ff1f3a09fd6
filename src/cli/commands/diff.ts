// `tapedeck diff <a> <b>`: align two runs and show where they part, side by side.
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { alignRuns, formatAlignment } from '../../bisect/index.js';
import { exitOnUsageError } from '../../recording/errors.js';
import { readRecording, TapedeckError } from '../../recording/index.js';
import { localRecording } from '../../store/recordings/index.js';
import { writeOut } from '../output.js';
import { printWarnings } from '../read-recording.js';

export function register(program: Command): void {
  program
    .command('diff')
    .exitOverride(exitOnUsageError)
    .description(
      'Aligns the trajectories of two recordings (say a baseline and its replay with a changed prompt) by edit distance over normalised actions: a tool step is its tool name and canonical arguments, a model step is the tool calls it decided (or "(final)" for an answer). Reports the edit distance, the similarity 1 - distance / max(len a, len b), the first divergent step and its kind, and shows both steps side by side. Exit code 1 when the runs differ.',
    )
    .argument('<a>', 'the first recording (the baseline): a folder, or <store>/<id>')
    .argument('<b>', 'the second recording (the replay): a folder, or <store>/<id>')
    .option('--all', 'also print the whole alignment, step by step')
    .option('--width <n>', 'column width of the side-by-side view (default: half the terminal, 38 at 80 columns)')
    .option('--json', 'print the alignment as JSON')
    .addHelpText(
      'after',
      `
Kinds of divergence:
  other-tool       the runs did different things at that point
  other-arguments  the same tool with different arguments
  extra-step       b did something a did not
  missing-step     a did something b did not

Examples:
  tapedeck diff recordings/examples/openai-baseline recordings/examples/openai-fixed-stream
  tapedeck diff recordings/examples/openai-baseline recordings/replay-1 --all
  tapedeck diff a b --json | jq .firstDivergence`,
    )
    .action(async (aRef: string, bRef: string, opts: { all?: boolean; width?: string; json?: boolean }) => {
      const [aDir, bDir] = [await localRecording(aRef), await localRecording(bRef)];
      for (const dir of [aDir, bDir])
        if (!existsSync(dir)) throw new TapedeckError('NO_RECORDING', `no recording at ${dir}`);
      // Two columns and their " | " separator fit the terminal (80 columns when not a terminal).
      const columns = process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80;
      const width = opts.width === undefined ? Math.max(20, Math.floor((columns - 3) / 2)) : Number(opts.width);
      if (!Number.isInteger(width) || width < 20)
        throw new TapedeckError('BAD_OPTIONS', `--width must be a number of at least 20, got "${opts.width}"`);
      const [a, b] = await Promise.all([readRecording(aDir), readRecording(bDir)]);
      for (const r of [a, b]) printWarnings(r.dir, r);
      const alignment = alignRuns(a, b);
      if (opts.json) {
        const { ops, ...rest } = alignment;
        const compact = ops.map((op) =>
          op.op === 'match'
            ? { op: op.op, stepA: op.a.step, stepB: op.b.step, action: op.a.line }
            : op.op === 'substitute'
              ? { op: op.op, kind: op.kind, stepA: op.a.step, stepB: op.b.step, a: op.a.line, b: op.b.line }
              : op.op === 'delete'
                ? { op: op.op, kind: op.kind, stepA: op.a.step, a: op.a.line }
                : { op: op.op, kind: op.kind, stepB: op.b.step, b: op.b.line },
        );
        writeOut(`${JSON.stringify({ ...rest, ops: compact }, null, 2)}\n`);
      } else {
        writeOut(`${formatAlignment(alignment, a, b, { all: opts.all === true, width })}\n`);
      }
      if (alignment.firstDivergence) process.exitCode = 1;
    });
}
