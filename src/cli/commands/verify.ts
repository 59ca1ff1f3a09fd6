// `tapedeck verify <recording…>` and `tapedeck list [dir]`: check recordings and see what is there.
import type { Command } from 'commander';
import { TapedeckError } from '../../recording/errors.js';
import { listRecordings, readRecording } from '../../recording/index.js';
import type { Recording } from '../../recording/types.js';

interface Summary {
  dir: string;
  id: string;
  name: string;
  status: string;
  createdAt: string;
  replayOf?: string;
  events: number;
  steps: number;
  modelCalls: number;
  toolCalls: number;
  divergences: number;
  warnings: string[];
}

function summarize(recording: Recording): Summary {
  const count = (type: string) => recording.events.filter((e) => e.type === type).length;
  const { manifest } = recording;
  return {
    dir: recording.dir,
    id: manifest.id,
    name: manifest.name,
    status: manifest.status,
    createdAt: manifest.createdAt,
    ...(manifest.replayOf ? { replayOf: manifest.replayOf } : {}),
    events: recording.events.length,
    steps: count('step.started'),
    modelCalls: count('model.called'),
    toolCalls: count('tool.called'),
    divergences: count('divergence'),
    warnings: recording.warnings,
  };
}

export function register(program: Command): void {
  program
    .command('verify')
    .summary('check that recordings are readable and intact')
    .description(
      'Reads each recording as every other command does: validates manifest.json and every line of events.jsonl against the format, checks the integrity hash, every blob against its sha256, and that snapshot paths stay inside their root. Prints a one-line summary per recording, or the first problem with its file, line and field. Exits 1 when any recording is bad.',
    )
    .argument('<recordings...>', 'recording folders')
    .option('--json', 'print one JSON object per recording: {ok, summary | error}')
    .action(async (dirs: string[], opts: { json?: boolean }) => {
      let bad = 0;
      const results: unknown[] = [];
      for (const dir of dirs) {
        try {
          const summary = summarize(await readRecording(dir));
          results.push({ ok: true, summary });
          if (!opts.json) {
            process.stdout.write(
              `ok   ${dir}: ${summary.status}, ${summary.steps} steps, ${summary.modelCalls} model calls, ${summary.toolCalls} tool calls${summary.divergences ? `, ${summary.divergences} divergences` : ''}\n`,
            );
            for (const w of summary.warnings) process.stdout.write(`     warning: ${w}\n`);
          }
        } catch (error) {
          if (!(error instanceof TapedeckError)) throw error;
          bad++;
          results.push({ ok: false, dir, error: { code: error.code, message: error.message } });
          if (!opts.json) process.stdout.write(`bad  ${dir}: ${error.message}\n`);
        }
      }
      if (opts.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
      if (bad > 0) process.exitCode = 1;
    });

  program
    .command('list')
    .summary('list the recordings under a folder')
    .description('Lists the recordings found under a folder (default ./recordings), oldest first.')
    .argument('[dir]', 'folder to search', 'recordings')
    .option('--json', 'print the manifests as JSON')
    .action(async (dir: string, opts: { json?: boolean }) => {
      const found = await listRecordings(dir);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
        return;
      }
      if (found.length === 0) {
        process.stdout.write(`no recordings under ${dir} (record one with: tapedeck record -- node agent.js)\n`);
        return;
      }
      for (const { dir: d, manifest } of found) {
        const kind = manifest.replayOf ? `replay of ${manifest.replayOf}` : 'recording';
        process.stdout.write(
          `${manifest.createdAt}  ${manifest.status.padEnd(10)}  ${manifest.name}  (${kind})  ${d}\n`,
        );
      }
    });
}
