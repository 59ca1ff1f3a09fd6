// Shared steps of the SDK coverage tests: record an unchanged agent with the real `tapedeck
// record` CLI (a child process), read what was recorded, and replay it exactly.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelCalledPayload, Recording, ToolCalledPayload, Usage } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import type { ReplayResult } from '../../src/replay/types.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const AGENTS = path.join(ROOT, 'test/sdks/agents');
const TAPEDECK = path.join(ROOT, 'bin/tapedeck.mjs');

/** The version of a package as installed in this repository's node_modules. */
export function installedVersion(name: string): string {
  const file = path.join(ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-sdks-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliRecording {
  dir: string;
  status: string;
  steps: number;
  exitCode: number | null;
  /** What the agent printed on stdout while it was recorded. */
  agentStdout: string;
  stderr: string;
}

/**
 * `tapedeck record --json --out <out> <flags…> -- node <agent> <args…>` as a child process;
 * `agent` is a file in test/sdks/agents/ or an absolute path.
 */
export function recordWithCli(options: {
  agent: string;
  args?: string[];
  /** Record options before `--` (e.g. `--fs DIR`). */
  flags?: string[];
  env: Record<string, string>;
  out: string;
}): Promise<CliRecording> {
  const argv = [
    TAPEDECK,
    'record',
    '--json',
    '--out',
    options.out,
    ...(options.flags ?? []),
    '--',
    process.execPath,
    path.resolve(AGENTS, options.agent),
    ...(options.args ?? []),
  ];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      argv,
      // Generous: a recording with world capture on a loaded machine takes a while.
      { cwd: ROOT, env: { ...process.env, ...options.env }, timeout: 180_000 },
      (error, stdout, stderr) => {
        const lines = stdout.trimEnd().split('\n');
        const last = lines.pop() ?? '';
        let result: { dir?: string; status?: string; steps?: number; exitCode?: number | null };
        try {
          result = JSON.parse(last) as typeof result;
        } catch {
          reject(new Error(`tapedeck record printed no JSON result (${String(error)}):\n${stdout}\n${stderr}`));
          return;
        }
        resolve({
          dir: result.dir ?? '',
          status: result.status ?? '',
          steps: result.steps ?? 0,
          exitCode: result.exitCode ?? null,
          agentStdout: lines.length > 0 ? `${lines.join('\n')}\n` : '',
          stderr,
        });
      },
    );
  });
}

/** Exact replay through the replayer API, the agent's output piped. */
export function replayExact(dir: string, env: Record<string, string>, out: string): Promise<ReplayResult> {
  return replay({ recording: dir, mode: 'exact', env, out, stdio: 'pipe', timeoutMs: 120_000 });
}

export function modelCalls(recording: Recording): Array<ModelCalledPayload & { step: number }> {
  return recording.events.flatMap((e) => (e.type === 'model.called' ? [{ ...e.payload, step: e.stepId }] : []));
}

export function toolCalls(
  recording: Recording,
): Array<ToolCalledPayload & { step: number; parentStepId: number | undefined }> {
  return recording.events.flatMap((e) =>
    e.type === 'tool.called' ? [{ ...e.payload, step: e.stepId, parentStepId: e.parentStepId }] : [],
  );
}

/** [stepId, stateType, name] of every step, in the order the steps were written. */
export function steps(recording: Recording): Array<[number, string, string]> {
  return recording.events.flatMap((e) =>
    e.type === 'step.started' ? [[e.stepId, e.payload.stateType, e.payload.name] as [number, string, string]] : [],
  );
}

/** [stepId, stateType] of every step, by step number. */
/** Each step as the recorder named it: [step, name, route, tool-call id] (tool steps after the agent's tool). */
export function stepNamesOf(recording: Recording): Array<[number, string, string?, string?]> {
  return recording.events.flatMap(
    (e): Array<[number, string, string?, string?]> =>
      e.type === 'step.started' ? [[e.stepId, e.payload.name, e.payload.route, e.payload.toolCallId]] : [],
  );
}

export function stepTypes(recording: Recording): Array<[number, string]> {
  return steps(recording)
    .map(([id, type]): [number, string] => [id, type])
    .sort((a, b) => a[0] - b[0]);
}

const n = (v: unknown): number => (typeof v === 'number' ? v : 0);
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};

/**
 * The buckets a model server's usage object means, computed here independently of the
 * recorder's codecs: Chat Completions (prompt/completion tokens) or Responses (input/output).
 */
export function expectedBuckets(raw: Record<string, unknown>): Usage {
  const responses = 'input_tokens' in raw;
  const input = n(responses ? raw.input_tokens : raw.prompt_tokens);
  const output = n(responses ? raw.output_tokens : raw.completion_tokens);
  const cached = n(obj(responses ? raw.input_tokens_details : raw.prompt_tokens_details).cached_tokens);
  const reasoning = n(obj(responses ? raw.output_tokens_details : raw.completion_tokens_details).reasoning_tokens);
  return { inputUncached: input - cached, cacheRead: cached, cacheWrite: 0, output: output - reasoning, reasoning };
}
