// `tapedeck verify <recording…>` and `tapedeck list [dir]`: check recordings and see what is there.
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import {
  hasLocalSeal,
  listRecordings,
  readRecording,
  silentToolCallWarnings,
  unhookedWarning,
  unrecordedWarning,
  unwatchedWarning,
} from '../../recording/index.js';
import type { Recording } from '../../recording/types.js';
import { isStoreUrl, listStore, localRecording } from '../../store/recordings/index.js';
import { writeOut } from '../output.js';

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
  /** This machine sealed it: a replay here runs its recorded command without --trust-recording. */
  sealedHere: boolean;
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
    sealedHere: hasLocalSeal(manifest),
    // A tool the model asked for that left no call in the recording: a side channel (see accounting.ts).
    warnings: [
      ...recording.warnings,
      ...silentToolCallWarnings(recording.events, { database: recording.manifest.world?.db !== undefined }),
      ...(recording.manifest.unrecorded ?? []).map(unrecordedWarning),
      ...(recording.manifest.unhooked ?? []).map((u) => unhookedWarning(u, 'recorded')),
      ...(recording.manifest.unwatched ?? []).map((u) => {
        const db = recording.manifest.world?.db;
        return unwatchedWarning(u, db === undefined ? undefined : (db.mode ?? 'snapshot'));
      }),
    ],
  };
}

export function register(program: Command): void {
  program
    .command('verify')
    .exitOverride(exitOnUsageError)
    .description(
      'Reads each recording as every other command does: validates manifest.json and every line of events.jsonl against the format, checks the integrity hash, every blob and every file kept inline against its sha256, and that snapshot paths stay inside their root. Says when this machine did not make a recording (no seal of its own: a replay runs its command only with --trust-recording). Prints a one-line summary per recording, or the first problem with its file, line and field. Exits 1 when any recording is bad.',
    )
    .argument('<recordings...>', 'recording folders, or <store>/<id> URLs (pg://…, file://…, s3://…)')
    .option('--json', 'print a JSON array, one object per recording: {ok, summary} or {ok, dir, error}')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck verify recordings/examples/openai-baseline
  tapedeck verify recordings/examples/*          every example recording, one line each
  tapedeck verify recordings/<run> --json | jq '.[0].summary.steps'`,
    )
    .action(async (dirs: string[], opts: { json?: boolean }) => {
      let bad = 0;
      const results: unknown[] = [];
      for (const dir of dirs) {
        try {
          const summary = summarize(await readRecording(await localRecording(dir)));
          results.push({ ok: true, summary });
          if (!opts.json) {
            writeOut(
              `ok   ${dir}: ${summary.status}, ${summary.steps} steps, ${summary.modelCalls} model calls, ${summary.toolCalls} tool calls${summary.divergences ? `, ${summary.divergences} divergences` : ''}${summary.sealedHere ? '' : ', made elsewhere (a replay runs its command only with --trust-recording)'}\n`,
            );
            for (const w of summary.warnings) writeOut(`     warning: ${w}\n`);
          }
        } catch (error) {
          if (!(error instanceof TapedeckError)) throw error;
          bad++;
          results.push({ ok: false, dir, error: { code: error.code, message: error.message } });
          // Most messages already start with the path; do not print it twice.
          const where = error.message.startsWith(dir.replace(/\/+$/, '')) ? '' : `${dir}: `;
          if (!opts.json) writeOut(`bad  ${where}${error.message}\n`);
        }
      }
      if (opts.json) writeOut(`${JSON.stringify(results, null, 2)}\n`);
      if (bad > 0) process.exitCode = 1;
    });

  program
    .command('list')
    .exitOverride(exitOnUsageError)
    .description(
      'Lists the recordings found under a folder (default ./recordings, three levels deep), or held by a recording store (pg://…, file://…, s3://…), oldest first: when each was made, its status (complete, failed, incomplete), whether it is a run or a replay of one, and its folder or URL, which is what every other command takes.',
    )
    .argument('[dir]', 'folder to search, or a store URL', 'recordings')
    .option('--json', 'print a JSON array of {dir, manifest}')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck list
  tapedeck list recordings/examples
  tapedeck list pg://postgres@127.0.0.1:5432/evals                   what a recording store holds
  tapedeck list --json | jq -r '.[] | select(.manifest.replayOf) | .dir'      only the replays`,
    )
    .action(async (dir: string, opts: { json?: boolean }, command: Command) => {
      if (isStoreUrl(dir)) {
        const stored = await listStore(dir);
        if (opts.json) writeOut(`${JSON.stringify(stored, null, 2)}\n`);
        else
          for (const r of stored)
            writeOut(
              `${r.manifest.createdAt.slice(0, 16).replace('T', ' ')}  ${r.manifest.status.padEnd(10)}  ${(r.manifest.replayOf ? 'replay' : 'run').padEnd(6)}  ${r.url}\n`,
            );
        return;
      }
      if (command.args.length > 0) {
        // A folder the user named must exist; the default ./recordings may not exist yet.
        let isDir = false;
        try {
          isDir = statSync(dir).isDirectory();
        } catch {
          throw new TapedeckError('NO_FOLDER', `${dir}: no such folder`);
        }
        if (!isDir) throw new TapedeckError('NO_FOLDER', `${dir}: is a file, not a folder of recordings`);
      }
      const found = await listRecordings(dir);
      if (opts.json) {
        writeOut(`${JSON.stringify(found, null, 2)}\n`);
        return;
      }
      if (found.length === 0) {
        writeOut(`no recordings under ${dir} (record one with: tapedeck record -- node agent.js)\n`);
        return;
      }
      // The folder goes last: it is what a user copies into the next command, and the only
      // column allowed to run past 80 characters.
      writeOut(`${'created (UTC)'.padEnd(16)}  ${'status'.padEnd(10)}  ${'kind'.padEnd(6)}  folder\n`);
      for (const { dir: d, manifest } of found) {
        const created = manifest.createdAt.slice(0, 16).replace('T', ' ');
        const kind = manifest.replayOf ? 'replay' : 'run';
        writeOut(`${created.padEnd(16)}  ${manifest.status.padEnd(10)}  ${kind.padEnd(6)}  ${d}\n`);
      }
    });
}
