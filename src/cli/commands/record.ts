// `tapedeck record [options] -- <command…>`: records one run of an unchanged agent.
import type { Command } from 'commander';
import { redactDbUrl } from '../../postgres/sql.js';
import { unhookedWarning, unrecordedWarning, unwatchedWarning } from '../../recording/accounting.js';
import { TapedeckError } from '../../recording/errors.js';
import { EXIT_INTERRUPTED } from '../exit-codes.js';
import { writeErr, writeOut } from '../output.js';

interface RecordCliOptions {
  fs?: string;
  db?: string;
  dbSchema?: string[];
  out?: string;
  name?: string;
  rules?: string;
  maxBody?: string;
  sample?: string;
  nondeterminism: boolean;
  json?: boolean;
  isolate?: boolean;
  store?: string;
}

function parseNumber(flag: string, value: string | undefined, check: (n: number) => boolean, expected: string) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || !check(n)) {
    throw new TapedeckError('BAD_OPTION', `${flag} ${JSON.stringify(value)} is not ${expected}`);
  }
  return n;
}

export function register(program: Command): void {
  program
    .command('record')
    .description(
      'Runs the agent command as a child process with a capture preload (node --import, inherited by node grandchildren through NODE_OPTIONS). The agent code is unchanged. Every model call (OpenAI Chat Completions/Responses, Anthropic Messages, Gemini, streamed or not) becomes a THINK or FINALIZE step with its messages, tool calls and usage, and an embeddings call a RETRIEVE step; every other HTTP call becomes a tool step (API_CALL, RETRIEVE, MCP_CALL); reads and writes of files under --fs become FILE_READ/FILE_WRITE steps; a WebSocket conversation (ws, undici, any client; ws:// and wss://) becomes one API_CALL step per message the agent sends, with the messages the server sent until its next, and a replay answers it from the recording. A connection that carries anything else (another HTTP upgrade, HTTP/2, Redis, a database not given with --db) is not recorded: each is named in a warning and in the manifest (`unrecorded`), and a replay refuses it. With --fs and --db the world is snapshotted before and after, and each step carries the file and row changes made during it — also by other processes, such as your tool API writing to the database. Secrets are redacted before anything is written.',
    )
    .argument('<command...>', 'the agent command, after `--` (e.g. -- node agent.mjs)')
    .option('--fs <dir>', 'filesystem root to snapshot and watch (the agent workspace)')
    .option('--db <url>', 'postgres:// URL to snapshot and watch (installs temporary change-capture triggers)')
    .option('--db-schema <schema...>', 'schemas to capture (default: every non-system schema)')
    .option('--out <dir>', 'recording folder (default: recordings/<id>/ under the current folder)')
    .option('--name <name>', 'a name for the run (default: the agent script name)')
    .option(
      '--rules <file>',
      'extra tool classification rules (YAML/JSON list of {match, stateType, name?, mutating?})',
    )
    .option('--max-body <bytes>', 'cut bodies larger than this many bytes (marked truncated)')
    .option('--sample <fraction>', 'record only this fraction of runs, 0..1 (a run not sampled just runs)')
    .option('--no-nondeterminism', 'do not capture Date/Math.random/crypto values')
    .option(
      '--isolate',
      "run the agent's whole tree in the OS sandbox (bubblewrap) with a recording proxy as its only way out: the HTTP(S) calls of every process (curl, Python, a Go binary) become steps",
    )
    .option(
      '--store <url>',
      'ship the finished recording to a store (s3://bucket/prefix?endpoint=…, pg://…, file://…) and remove the local copy',
    )
    .option('--json', "print the result as JSON: the last line of stdout, after the agent's own output")
    .addHelpText(
      'after',
      `
Examples:
  tapedeck record -- node agent.mjs
  tapedeck record --fs ./workspace --db postgres://localhost/app --db-schema travel -- node agent.mjs --stream
  tapedeck record --out recordings/ticket-42 --name ticket-42 --max-body 1000000 -- npm start
  tapedeck record --isolate --db postgres://localhost/app -- node agent.mjs   # tools that run curl/psql
  tapedeck record --store s3://team-recordings/prod -- node agent.mjs       # AWS credentials from the environment

The recording folder holds manifest.json, events.jsonl (one event per line), blobs/ and
snapshots/{pre,post}. A run that crashes leaves a readable recording marked "incomplete" with
every finished step. Ctrl-C or SIGTERM to tapedeck is passed on to the agent (a second one kills it),
and the recording is closed whole, marked "interrupted". The exit code is the agent's (130 when
interrupted).`,
    )
    .action(async (command: string[], opts: RecordCliOptions) => {
      const maxBodyBytes = parseNumber(
        '--max-body',
        opts.maxBody,
        (n) => Number.isInteger(n) && n >= 0,
        'a byte count',
      );
      const sample = parseNumber('--sample', opts.sample, (n) => n >= 0 && n <= 1, 'a fraction between 0 and 1');
      if (opts.db !== undefined && !/^postgres(ql)?:\/\//.test(opts.db)) {
        throw new TapedeckError('BAD_OPTION', `--db ${redactDbUrl(opts.db)} is not a postgres:// URL`);
      }
      if (opts.fs !== undefined) {
        const { statSync } = await import('node:fs');
        const stat = statSync(opts.fs, { throwIfNoEntry: false });
        if (stat === undefined) throw new TapedeckError('BAD_OPTION', `--fs ${opts.fs}: no such folder`);
        if (!stat.isDirectory()) throw new TapedeckError('BAD_OPTION', `--fs ${opts.fs}: not a folder`);
      }
      if (opts.store !== undefined && !/^(s3|pg|file):\/\//.test(opts.store)) {
        throw new TapedeckError(
          'BAD_OPTION',
          `--store ${JSON.stringify(opts.store)} is not a store URL (s3://bucket/prefix, pg://…/db, file:///folder)`,
        );
      }
      // The child-process recorder alone, not the package's whole record API (in-process record(),
      // its recording thread, the server middleware): loading is most of record's fixed cost.
      const { recordCommand } = await import('../../record/command.js');
      const result = await recordCommand({
        command,
        ...(opts.fs === undefined ? {} : { fsRoot: opts.fs }),
        ...(opts.db === undefined ? {} : { dbUrl: opts.db }),
        ...(opts.dbSchema === undefined ? {} : { dbSchemas: opts.dbSchema }),
        ...(opts.out === undefined ? {} : { out: opts.out }),
        ...(opts.name === undefined ? {} : { name: opts.name }),
        ...(opts.rules === undefined ? {} : { rules: opts.rules }),
        ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
        ...(sample === undefined ? {} : { sample }),
        nondeterminism: opts.nondeterminism,
        ...(opts.isolate ? { isolate: true } : {}),
        onWarning: (message: string) => writeErr(`tapedeck: warning: ${message}\n`),
        stdio: 'inherit',
      });
      const status = !result.recorded
        ? 'not sampled'
        : result.interrupted
          ? 'interrupted'
          : result.exitCode === 0
            ? 'complete'
            : 'incomplete';
      // Honest accounting: a tool the model asked for that left no call in the recording (kept as
      // the events were written: no read-back of the recording).
      const { silentToolCalls = [], worldWarnings = [], ...outcome } = result;
      const warnings = [
        ...worldWarnings,
        ...silentToolCalls,
        ...(result.unrecorded ?? []).map(unrecordedWarning),
        ...(result.unhooked ?? []).map((u) => unhookedWarning(u, 'recorded')),
        ...(result.unwatched ?? []).map((u) => unwatchedWarning(u, opts.db === undefined ? undefined : 'snapshot')),
      ];
      if (outcome.recorded && opts.store !== undefined) {
        const { shipRecording } = await import('../../record/recorder.js');
        outcome.dir = await shipRecording(outcome.dir, opts.store);
      }
      if (opts.json) {
        writeOut(`${JSON.stringify({ ...outcome, status, ...(warnings.length > 0 ? { warnings } : {}) })}\n`);
      } else if (result.recorded) {
        const exit = result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
        writeErr(`tapedeck: recorded ${result.steps} steps (${status}, ${exit}) -> ${outcome.dir}\n`);
        for (const w of warnings) writeErr(`tapedeck: warning: ${w}\n`);
        for (const c of result.sideChannels ?? []) {
          writeErr(`tapedeck: warning: a way out the sandbox refused (not in the recording): ${c}\n`);
        }
      } else {
        writeErr('tapedeck: run not sampled; nothing recorded\n');
      }
      if (result.interrupted) process.exitCode = EXIT_INTERRUPTED;
      else if (result.exitCode !== 0) process.exitCode = result.exitCode ?? 1;
    });
}
