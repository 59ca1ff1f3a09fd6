// What a worker does with a job: `replay` (replay a recording, optionally with a changed prompt,
// evaluate it, ingest its ledger and scores, push the replay to the recording's store, and mark
// the sweep probe it answers) and `ingest`. A job's payload comes from the database: it is
// validated here, and it carries text (prompts, contracts), never paths only one machine has.

import { join, resolve } from 'node:path';
import * as z from 'zod';
import { DurationInputSchema, parseDuration } from '../config/duration.js';
import { loadConfig, type TapedeckConfig, withOverrides } from '../config/index.js';
import { TapedeckError } from '../recording/errors.js';
import { readRecording } from '../recording/index.js';
import type { Job, JobHandler, JobKind } from './queue.js';
import { isStoreUrl, localRecording, pushRecording } from './recordings/index.js';
import { normalizeScores, type Scores } from './scores.js';
import { isProbeAnswered, recordProbeResult } from './sweep.js';
import type { Warehouse } from './warehouse.js';

/** The probe of a sweep a replay job answers (see sweep.ts). */
export const ProbeSchema = z
  .object({
    key: z.string().min(1).max(200),
    taskId: z.string().min(1),
    sample: z.number().int().min(0),
  })
  .strict();

export const ReplayJobSchema = z
  .object({
    /** A recording folder this worker can read, or a store URL (pg://…/<id>, file://…/<id>). */
    recording: z.string().min(1),
    mode: z.enum(['exact', 'counterfactual']).default('exact'),
    systemPrompt: z.string().optional(),
    promptPatch: z.string().optional(),
    /** In a run of several agents, whose prompt the override changes (ReplayOptions.promptFor). */
    promptFor: z.string().min(1).optional(),
    modelEndpoint: z.string().url().optional(),
    /** Eval contract YAML text: the replay is scored before it is ingested. */
    contract: z.string().optional(),
    /** The project file (tapedeck.config.*, a path on the worker) whose answer chain the replay uses instead of the worker's. */
    config: z.string().optional(),
    /** Where the replay recording goes: a store URL it is pushed to, or a folder on the worker (one subfolder per job). */
    out: z.string().optional(),
    probe: ProbeSchema.optional(),
    /**
     * Run the recorded command and apply the recorded env though this worker's key did not seal the
     * recording (enqueue --trust-recording): whoever may write the queue is trusted with that.
     */
    trustRecording: z.boolean().optional(),
    /** The replay's idle and wall limits (`90s`, `5m`, `none`): default the worker's config file's, else 5m and none. */
    timeout: DurationInputSchema.optional(),
    wallTimeout: DurationInputSchema.optional(),
  })
  .strict();
export type ReplayJob = z.infer<typeof ReplayJobSchema>;

export const IngestJobSchema = z.object({ recording: z.string().min(1), contract: z.string().optional() }).strict();
export type IngestJob = z.infer<typeof IngestJobSchema>;

function payloadOf<T extends z.ZodType>(schema: T, job: Job): z.infer<T> {
  const parsed = schema.safeParse(job.payload);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TapedeckError(
    'BAD_JOB',
    `${job.kind} job ${job.id}: payload field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
  );
}

async function scoresFor(dir: string, contractYaml: string | undefined): Promise<Scores | undefined> {
  if (contractYaml === undefined) return undefined;
  const { evaluateRecording, parseContract } = await import('../evaluate/index.js');
  return normalizeScores(
    evaluateRecording(await readRecording(dir), parseContract(contractYaml, 'the job’s contract')),
  );
}

export interface JobContext {
  warehouse: Warehouse;
  /** This worker's own folder: pulled recordings and replays are kept under it. */
  workDir: string;
  /** The worker's project file: sandbox services, mocks and simulator answer what a recording cannot. */
  config?: TapedeckConfig;
}

/** The handlers of every job kind. */
export function jobHandlers({ warehouse, workDir, config }: JobContext): Record<JobKind, JobHandler> {
  const cacheDir = join(resolve(workDir), 'cache', 'recordings');
  return {
    async ingest(job) {
      const payload = payloadOf(IngestJobSchema, job);
      const dir = await localRecording(payload.recording, cacheDir);
      const scores = await scoresFor(dir, payload.contract);
      const result = await warehouse.ingest(await readRecording(dir), scores);
      return { traceId: result.traceId, rows: result.rows };
    },
    async replay(job) {
      const payload = payloadOf(ReplayJobSchema, job);
      // A probe answered before (a retried job whose first attempt got that far, or the same probe
      // queued by another sweep) is not run twice.
      if (payload.probe && (await isProbeAnswered(warehouse, payload.probe.key)))
        return { skipped: 'probe already answered' };
      const dir = await localRecording(payload.recording, cacheDir);
      const outIsStore = payload.out !== undefined && isStoreUrl(payload.out);
      const local = join(
        payload.out !== undefined && !outIsStore ? resolve(payload.out) : join(resolve(workDir), 'replays'),
        job.id,
      );
      const chain =
        payload.config !== undefined ? withOverrides(await loadConfig({ file: payload.config })).config : config;
      const { replay } = await import('../replay/replay.js');
      const result = await replay({
        recording: dir,
        mode: payload.mode,
        out: local,
        stdio: 'ignore',
        ...(payload.systemPrompt !== undefined ? { systemPrompt: payload.systemPrompt } : {}),
        ...(payload.promptPatch !== undefined ? { promptPatch: payload.promptPatch } : {}),
        ...(payload.promptFor !== undefined ? { promptFor: payload.promptFor } : {}),
        ...(payload.modelEndpoint !== undefined ? { modelEndpoint: payload.modelEndpoint } : {}),
        ...(chain ? { config: chain } : {}),
        ...(payload.trustRecording ? { trustRecording: true } : {}),
        ...(payload.timeout !== undefined ? { idleTimeoutMs: parseDuration('timeout', payload.timeout) } : {}),
        ...(payload.wallTimeout !== undefined
          ? { wallTimeoutMs: parseDuration('wallTimeout', payload.wallTimeout) }
          : {}),
      });
      const scores = await scoresFor(result.dir, payload.contract);
      const ingested = await warehouse.ingest(await readRecording(result.dir), scores);
      const replayRef = outIsStore ? (await pushRecording(result.dir, payload.out as string)).url : result.dir;
      if (payload.probe) {
        await recordProbeResult(warehouse, payload.probe.key, {
          traceId: ingested.traceId,
          evalId: typeof scores?.task?.eval_id === 'string' ? scores.task.eval_id : null,
          replay: replayRef,
          jobId: job.id,
        });
      }
      return {
        replay: replayRef,
        traceId: ingested.traceId,
        exitCode: result.exitCode,
        status: result.status,
        // A hung agent's job is done, not retried: its replay says where it stopped.
        ...(result.stopped ? { stopped: result.stopped.message } : {}),
        divergences: result.divergences.length,
        ...(result.divergences[0] ? { firstDivergence: result.divergences[0].message } : {}),
        ...(scores?.task ? { hardSuccess: scores.task.hard_success === true } : {}),
      };
    },
  };
}
