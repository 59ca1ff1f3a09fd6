// `tapedeck push <recording…> <store>` and `tapedeck pull <store>/<id> [--out dir]`: move recordings
// between this disk and a recording store (Postgres, a shared folder, S3) every worker can reach.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { exitOnUsageError, TapedeckError } from '../../recording/errors.js';
import {
  isStoreUrl,
  localRecording,
  type PutResult,
  pullRecording,
  pushRecording,
} from '../../store/recordings/index.js';
import { writeOut } from '../output.js';
import { printWarnings, readGivenRecording } from '../read-recording.js';

const STORES = `Stores:
  pg://user@host:5432/db        a Postgres database (tables tapedeck_store_*; blobs stored once across recordings)
  file:///srv/recordings        a folder every machine mounts
  s3://bucket/prefix            S3 or an S3-compatible server (?endpoint=http://minio:9000, ?region=;
                                credentials from the AWS SDK's usual chain, never the URL)
A recording in a store is <store>/<id>, e.g. pg://postgres@127.0.0.1:5432/evals/openai-baseline; every
command that takes a recording folder takes that too (replay, eval, ledger, bisect, diff, verify, ingest,
worker enqueue, sweep, tui, export).`;

export function register(program: Command): void {
  program
    .command('push')
    .exitOverride(exitOnUsageError)
    .description(
      'Stores recordings in a recording store, under their manifest id, so workers on other machines can replay them by URL. Each recording is read and verified first (as verify does). Files the store already holds — from this or any other recording — are not sent again. Pushing a recording the store holds byte for byte is a no-op; a different recording with the same id is refused (recordings are immutable).',
    )
    .argument('<recordings...>', 'recording folders, then the store URL last')
    .option('--json', 'print what was stored as JSON')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck push recordings/examples/openai-baseline pg://postgres@127.0.0.1:5432/evals
  tapedeck push recordings/examples/* pg://postgres@db:5432/evals --json
  tapedeck push recordings/run-1 file:///mnt/shared/recordings
  tapedeck push recordings/run-1 's3://team-recordings/prod?endpoint=http://127.0.0.1:9000'

${STORES}`,
    )
    .action(async (args: string[], opts: { json?: boolean }) => {
      const storeUrl = args.at(-1) as string;
      const dirs = args.slice(0, -1);
      if (dirs.length === 0 || !isStoreUrl(storeUrl)) {
        throw new TapedeckError(
          'BAD_OPTION',
          'give the recordings, then the store URL: tapedeck push recordings/<run> pg://user@host:5432/db',
        );
      }
      const results: PutResult[] = [];
      for (const dir of dirs) {
        await readGivenRecording(dir); // a bad recording is refused before anything is sent
        results.push(await pushRecording(await localRecording(dir), storeUrl));
      }
      if (opts.json) {
        writeOut(`${JSON.stringify(results, null, 2)}\n`);
        return;
      }
      for (const r of results) {
        const what = r.added
          ? `${r.files} files, ${r.bytes} bytes (${r.reused} already in the store)`
          : 'already there, unchanged';
        writeOut(`${r.url}  ${what}\n`);
      }
    });

  program
    .command('pull')
    .exitOverride(exitOnUsageError)
    .description(
      "Copies a recording out of a recording store into a new local folder. Every file is checked against its sha256 as it is written, and the folder is then read as any recording is (the store's content is untrusted input, like any recording). Commands that take a recording accept its URL directly; pull is for keeping a copy.",
    )
    .argument('<recording-url>', 'the recording: <store>/<id>')
    .option('--out <dir>', 'the new folder (default: recordings/<id>)')
    .addHelpText(
      'after',
      `
Examples:
  tapedeck pull pg://postgres@127.0.0.1:5432/evals/openai-baseline
  tapedeck pull pg://postgres@db:5432/evals/openai-baseline --out /tmp/baseline

${STORES}`,
    )
    .action(async (ref: string, opts: { out?: string }) => {
      if (!isStoreUrl(ref)) throw new TapedeckError('BAD_OPTION', `${ref} is not a store URL: pull takes <store>/<id>`);
      const id = ref
        .replace(/[?#].*$/, '')
        .split('/')
        .at(-1) as string;
      const out = resolve(opts.out ?? `recordings/${id}`);
      const recording = await pullRecording(ref, out);
      printWarnings(out, recording);
      writeOut(`${out}  ${recording.manifest.status}, ${recording.events.length} events\n`);
    });
}
