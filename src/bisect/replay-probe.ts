// The real prompt probe: replay the recording with a prompt, judge the replay, price it from the ledger.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Contract, evaluateRecording } from '../evaluate/index.js';
import { buildLedger } from '../ledger/index.js';
import { readRecording, TapedeckError } from '../recording/index.js';
import type { AnswerChain } from '../replay/chain/index.js';
import { replay } from '../replay/replay.js';
import { bisectBelief } from './bisect-belief.js';
import type { StepPredicate } from './predicate.js';
import type { ProbeFn, ProbeOutcome } from './probe-cache.js';

export interface ReplayProbeOptions {
  /** The recording to replay. */
  recording: string;
  /** The predicate a passing replay satisfies through its last step (a fresh one per probe). */
  predicate: () => StepPredicate;
  /** Where live model calls go (the counterfactual replay's model endpoint). */
  modelEndpoint?: string;
  /** Folder the replay recordings are written to (one per prompt). */
  outRoot: string;
  /** A real Postgres server for the replay's database sandbox (template clone). */
  db?: string;
  /** When given, the replay passes on the contract's hard gate instead of the predicate. */
  contract?: Contract;
  /**
   * The answer chain every probe's replay uses (sandbox services, mocks, simulator), kept across
   * probes: its services start once, and each probe gets a fresh database behind them.
   */
  chain?: AnswerChain;
  /** The agent's environment for each probe's replay. */
  env?: Record<string, string>;
  /** The agent command (default: the recorded one, see ReplayOptions.command). */
  command?: string[];
  /** Run the recorded command of a recording this machine did not seal (ReplayOptions.trustRecording). */
  trustRecording?: boolean;
  /** In a run of several agents, whose prompt the probed versions are (ReplayOptions.promptFor). */
  promptFor?: string;
  /** Each probe's limits (ReplayOptions.idleTimeoutMs, wallTimeoutMs); a probe past them is a timed-out outcome. */
  idleTimeoutMs?: number;
  wallTimeoutMs?: number;
  /** A signal to tapedeck stops the running probe's agent and the search (ReplayOptions.stopOnSignals). */
  stopOnSignals?: boolean;
}

/** A probe that replays `recording` counterfactually with the prompt as its system prompt. */
export function replayProbe(options: ReplayProbeOptions): ProbeFn {
  return async (promptText) => {
    const out = join(options.outRoot, `probe-${createHash('sha256').update(promptText).digest('hex').slice(0, 12)}`);
    rmSync(out, { recursive: true, force: true });
    const result = await replay({
      recording: options.recording,
      mode: 'counterfactual',
      systemPrompt: promptText,
      out,
      stdio: 'ignore',
      ...(options.modelEndpoint ? { modelEndpoint: options.modelEndpoint } : {}),
      ...(options.db ? { db: options.db } : {}),
      ...(options.chain ? { chain: options.chain } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.command ? { command: options.command } : {}),
      ...(options.trustRecording ? { trustRecording: true } : {}),
      ...(options.promptFor !== undefined ? { promptFor: options.promptFor } : {}),
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      ...(options.wallTimeoutMs !== undefined ? { wallTimeoutMs: options.wallTimeoutMs } : {}),
      ...(options.stopOnSignals ? { stopOnSignals: true } : {}),
    });
    // Interrupted: the user stops the search, not this probe.
    if (result.status === 'interrupted')
      throw new TapedeckError('BISECT_INTERRUPTED', `bisect-prompt ${result.stopped?.message ?? 'interrupted'}`, {
        exitCode: 130,
      });
    // Timed out: an outcome of its own (neither pass nor fail), which the search skips.
    if (result.status === 'timed-out')
      return { ok: false, timedOut: true, reason: result.stopped?.message ?? 'timed out', recordingDir: result.dir };
    // A model (or service) that did not answer says nothing about the prompt: judging the probe
    // would name a good version bad (and cache it), so the search stops and says why.
    const failed = result.answerFailures?.[0];
    if (failed) {
      throw new TapedeckError(
        'BISECT_PROBE_FAILED',
        `a probe could not be judged: ${failed}. Start the model (or give --model-endpoint) and run again.`,
      );
    }
    const recording = await readRecording(result.dir);
    const ledger = buildLedger(recording);
    const outcome: ProbeOutcome = {
      ok: result.status === 'complete',
      cost: ledger.run.replay_cost ?? ledger.run.total_cost,
      recordingDir: result.dir,
    };
    if (options.contract) {
      const { task } = evaluateRecording(recording, options.contract);
      outcome.ok &&= task.hardSuccess;
      if (!task.hardSuccess) {
        const at = task.primaryFailureStepId === null ? '' : `step ${task.primaryFailureStepId}: `;
        outcome.reason = `${at}${task.primaryFailureReasonCode ?? 'hard gate failed'}${task.primaryFailureMessage ? ` — ${task.primaryFailureMessage}` : ''}`;
      }
    } else {
      const verdict = await bisectBelief(recording, options.predicate());
      outcome.ok &&= verdict.firstBad === undefined;
      if (verdict.firstBad) outcome.reason = `step ${verdict.firstBad.step}: ${verdict.firstBad.reason}`;
    }
    if (result.status !== 'complete') outcome.reason ??= `the replay ${result.status} (exit ${result.exitCode})`;
    return outcome;
  };
}

/**
 * A probe that runs a shell command, like `git bisect run`: the prompt is in the file named by
 * TAPEDECK_PROMPT_FILE; exit 0 = pass, any other exit = fail. For probes outside tapedeck's replayer.
 */
export function commandProbe(command: string, recordingDir: string): ProbeFn {
  return async (promptText) => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-probe-'));
    try {
      const file = join(dir, 'prompt.txt');
      writeFileSync(file, promptText);
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn('sh', ['-c', command], {
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, TAPEDECK_PROMPT_FILE: file, TAPEDECK_RECORDING: recordingDir },
        });
        child.on('error', reject);
        child.on('close', resolve);
      });
      if (code === null || code === 126 || code === 127 || code > 128) {
        throw new TapedeckError('BISECT_PROBE_FAILED', `probe command \`${command}\` could not run (exit ${code})`);
      }
      return code === 0 ? { ok: true } : { ok: false, reason: `\`${command}\` exited ${code}` };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** A probe cache on disk: one JSON file per key under `dir`. */
export function diskStore(dir: string): {
  get(key: string): ProbeOutcome | undefined;
  set(key: string, outcome: ProbeOutcome): void;
} {
  mkdirSync(dir, { recursive: true });
  return {
    get(key) {
      try {
        return JSON.parse(readFileSync(join(dir, `${key}.json`), 'utf8')) as ProbeOutcome;
      } catch {
        return undefined;
      }
    },
    set(key, outcome) {
      writeFileSync(join(dir, `${key}.json`), JSON.stringify(outcome));
    },
  };
}
