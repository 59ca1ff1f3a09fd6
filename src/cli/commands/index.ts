// The command table: every `tapedeck` command's name and one-line summary, and how to load it.
// A command's module is imported only when that command runs (or its --help is asked for), so
// `tapedeck --version` and `tapedeck verify` never load pg, PGlite, ink or the tokenizer.
//
// To add a command: write commands/<name>.ts exporting `register(program)` (it defines the
// command's options, help and action; import what the action needs inside the module, heavy
// libraries inside the action), then add one line below.
import type { Command } from 'commander';

export interface CommandModule {
  /** Defines the command(s) on `program`: name, arguments, options, help, action. */
  register(program: Command): void;
}

export interface CommandEntry {
  name: string;
  /** The line shown by `tapedeck --help`; the module does not repeat it. */
  summary: string;
  load: () => Promise<CommandModule>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'record',
    summary: 'record an agent run: HTTP + LLM calls, tool calls, fs + Postgres changes, clock/random',
    load: () => import('./record.js'),
  },
  {
    name: 'replay',
    summary: 're-run an agent against a recording in a sandbox: exact, or counterfactual with a changed prompt',
    load: () => import('./replay.js'),
  },
  {
    name: 'bisect',
    summary: 'find the first step where the agent’s belief diverged from the world',
    load: () => import('./bisect.js'),
  },
  {
    name: 'bisect-prompt',
    summary: 'find the prompt version (or the smallest prompt change) that flips a replay’s outcome',
    load: () => import('./bisect.js'),
  },
  { name: 'diff', summary: 'align two runs and show the first step where they part', load: () => import('./diff.js') },
  {
    name: 'eval',
    summary: 'score recordings or replays against an eval contract: hard gate, soft score, failure codes, state diff',
    load: () => import('./eval.js'),
  },
  {
    name: 'ledger',
    summary: 'token, cost and latency ledger of a recording or replay, with the seed metrics',
    load: () => import('./ledger.js'),
  },
  {
    name: 'ingest',
    summary: 'load recordings (ledger rows) and their scores into the evaluation warehouse',
    load: () => import('./ingest.js'),
  },
  { name: 'query', summary: 'run SQL against the evaluation warehouse', load: () => import('./query.js') },
  {
    name: 'worker',
    summary: 'run queued replays and ingests from the warehouse job queue (scale-out over machines)',
    load: () => import('./worker.js'),
  },
  {
    name: 'export',
    summary: 'write a recording as OpenTelemetry GenAI spans (file or collector), a HAR archive, or msw handlers',
    load: () => import('./export.js'),
  },
  {
    name: 'import',
    summary: 'make a recording from OpenTelemetry GenAI spans or a HAR archive',
    load: () => import('./import.js'),
  },
  {
    name: 'sweep',
    summary:
      'replay recordings × prompt versions × k samples through the queue: pass@k, pass^k, cost per resolved task',
    load: () => import('./sweep.js'),
  },
  {
    name: 'snapshot',
    summary: 'save, list and remove named development snapshots that replays seed their database from',
    load: () => import('./snapshot.js'),
  },
  {
    name: 'tui',
    summary: 'browse recordings, time-travel through a run, replay it with a changed prompt, bisect',
    load: () => import('./tui.js'),
  },
  {
    name: 'doctor',
    summary:
      'remove what killed recordings and replays left: temp folders, sockets, capture triggers, sandbox databases',
    load: () => import('./doctor.js'),
  },
  { name: 'verify', summary: 'check that recordings are readable and intact', load: () => import('./verify.js') },
  { name: 'list', summary: 'list the recordings under a folder or in a store', load: () => import('./verify.js') },
  {
    name: 'push',
    summary: 'store recordings in a recording store (Postgres, shared folder, S3)',
    load: () => import('./push.js'),
  },
  { name: 'pull', summary: 'copy a recording out of a recording store', load: () => import('./push.js') },
];
