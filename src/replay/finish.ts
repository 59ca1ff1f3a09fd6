// The end of a replay, after the agent exited: the last steps and divergences written (the
// recorded calls never made, the local steps up to --until K), the post-world snapshot, the world
// at step K kept for inspection, the run's status, the comparison with the recorded end state
// (src/diff) and the result; and the warnings only the agent's exit dumps can give.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compareWorlds } from '../diff/compare-worlds.js';
import {
  blobRelativePath,
  type DbSnapshot,
  describeStop,
  endWorld,
  type FsSnapshot,
  type Recording,
  type Stopped,
} from '../recording/index.js';
import { concurrentDatabaseWork, drawnBeforeFirstStep } from './drawn.js';
import type { ReplaySession } from './session.js';
import { type AgentExit, dbOrderOf, type ExitDumps, type ReplayDatabase } from './setup.js';
import type { ReplayOptions, ReplayResult } from './types.js';
import { writeWorld } from './world.js';

/** After the agent exited: the last steps and divergences, the post-world, the result. */
export async function finish(
  session: ReplaySession,
  run: {
    recording: Recording;
    options: ReplayOptions;
    out: string;
    exit: AgentExit;
    database: ReplayDatabase;
    /** Why the watchdog or a signal stopped the agent, when one did. */
    stopped: Stopped | undefined;
    /**
     * The recording's last step when its recorder never closed it (cutAt): the replay stopped there
     * (options.until is set to it) and its end state is compared with the world the recording knows.
     */
    cut?: number | undefined;
  },
): Promise<Omit<ReplayResult, 'warnings' | 'output'>> {
  const { recording, options, out, exit, stopped, cut } = run;
  const { db, tracker, seeded } = run.database;
  const w = session.writer;
  const stoppedEarly = session.stopped;
  if (stopped) {
    // Stopped from outside: what it did until then is written; nothing it never reached is
    // copied from the recording or called missing.
    session.flushPending(session.lastStep);
  } else if (
    options.until !== undefined &&
    (stoppedEarly ||
      (options.mode === 'exact' &&
        // A cut recording's agent that ended before the cut made too few calls: they are missing.
        (cut === undefined ? session.lastStep <= options.until : session.lastStep >= cut)))
  ) {
    // until K, stopped at the question after K or ended before it: the agent's own writes after K's
    // call (the recording's step K+1) ran before that, so they are undone: the world is step K's.
    const past = await session.takeRowsPast(options.until);
    if (past.length > 0 && db) {
      // Loaded here: a replay without a database never needs the seeding module.
      const { invertRowChanges } = await import('../postgres/seed.js');
      await db.apply(invertRowChanges(past));
      await tracker?.drain();
    }
    // Stopped after step K: the local steps up to K the agent made since it last asked are written.
    session.fillGap(options.until + 1);
  } else if (options.mode === 'exact' && !stoppedEarly) {
    session.fillGap(Number.POSITIVE_INFINITY);
    session.reportMissingCalls();
  } else {
    // What the agent wrote after its last call (counterfactual): a step of its own, as recorded.
    session.writeOwnChanges();
    session.flushPending(session.lastStep);
  }
  const post: { fs?: FsSnapshot; db?: DbSnapshot } = {};
  if (session.files.root) post.fs = session.files.snapshot();
  if (tracker) post.db = await tracker.snapshot();
  w.writeSnapshot('post', post);
  let worldDir: string | undefined;
  let worldDb: string | undefined;
  // --until K's world is kept for inspection; a cut recording's replay has nothing to show beyond it.
  if (cut === undefined && (stoppedEarly || options.until !== undefined)) {
    worldDir = path.join(out, 'world');
    const readBlob = (sha: string) => {
      try {
        return recording.readBlob(sha);
      } catch {
        // Blobs the replay itself stored (files the agent wrote) live in the new recording.
        return readFileSync(path.join(out, blobRelativePath(sha)));
      }
    };
    await writeWorld(worldDir, post.fs ?? { files: {} }, readBlob, post.db);
    // The database of step K stays inspectable: a kept clone on the server, or PGlite's data dir.
    if (db) {
      await tracker?.close();
      const kept = await db.keep();
      if (kept.dataDir) await writeFile(path.join(worldDir, 'pglite-datadir.tar'), kept.dataDir);
      if (kept.url) worldDb = kept.url;
    }
  }
  const failed = !stoppedEarly && exit.code !== 0;
  const status: ReplayResult['status'] = stopped
    ? stopped.reason === 'interrupted'
      ? 'interrupted'
      : 'timed-out'
    : failed
      ? 'failed'
      : 'complete';
  w.append({
    type: 'run.completed',
    stepId: 0,
    payload: {
      status,
      exitCode: stoppedEarly ? null : exit.code,
      ...(exit.signal ? { signal: exit.signal } : {}),
      ...(session.finalOutput !== undefined ? { finalOutput: session.finalOutput } : {}),
    },
  });
  await w.close(status, stopped ? { stopped } : undefined);
  const worldDiff =
    options.mode === 'exact' &&
    !stopped &&
    options.forkAt === undefined &&
    (cut !== undefined || (!stoppedEarly && options.until === undefined))
      ? // Seeded from a named snapshot: the recorded end state laid over that snapshot.
        compareWorlds(
          endWorld(
            seeded
              ? {
                  events: recording.events,
                  pre: { ...recording.pre, db: seeded.pre },
                  post: { ...recording.post, ...(seeded.post ? { db: seeded.post } : {}) },
                }
              : recording,
          ),
          post,
        )
      : undefined;
  const first = session.divergences.reduce<number | undefined>(
    (min, d) => (min === undefined || d.step < min ? d.step : min),
    undefined,
  );
  const saved = session.savedCost;
  return {
    dir: out,
    id: w.id,
    status,
    ...(stopped ? { stopped: { ...stopped, message: describeStop(stopped) } } : {}),
    exitCode: exit.code,
    divergences: session.divergences,
    ...(first !== undefined ? { firstDivergentStep: first } : {}),
    heldBack: session.heldBack,
    served: session.served,
    savedCost: {
      calls: saved.calls,
      usage: saved.usage,
      ...(saved.usd !== undefined && saved.calls > 0 ? { usd: saved.usd } : {}),
    },
    blockedConnections: session.blockedConnections,
    ...(cut !== undefined ? { cutAt: cut } : {}),
    ...(worldDiff
      ? {
          worldMatches: worldDiff.differences.length === 0,
          worldDiff: worldDiff.differences,
          ...(worldDiff.serverClock.length > 0 ? { worldServerClock: worldDiff.serverClock } : {}),
        }
      : {}),
    ...(worldDir ? { worldDir } : {}),
    ...(worldDb ? { worldDb } : {}),
  };
}

/** A count of values by kind, as a user reads it ("2 clock (Date) values, 1 randomUUID value"). */
function valueCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} ${VALUE_KINDS[kind] ?? kind} value${n === 1 ? '' : 's'}`)
    .join(', ');
}

/**
 * A run recorded in-process whose replayed command did not mark its start (runInput(), record()):
 * said when it matters, that is when the run drew values before its first call, which the replay
 * could not tell from the command's own and did not serve, or never started and served none.
 */
function unmarkedRunStart(runStart: ExitDumps['runStart'], recording: Recording): string | undefined {
  if (runStart === undefined || runStart.by === 'marker') return undefined;
  const skipped = valueCounts(drawnBeforeFirstStep(recording.events));
  const own = valueCounts(runStart.before);
  const fix =
    "call runInput() (or record()) in the replay command right before the agent function: the run's values start there";
  if (runStart.by === 'call') {
    if (skipped === '') return undefined;
    return `the replay command made its first recorded call without marking its run's start: the ${skipped} the run drew before that call were not served, and what the command drew before it (${own || 'nothing'}) was its own; ${fix}`;
  }
  const recorded = recording.events.some(
    (e) =>
      e.type === 'nondeterminism' &&
      e.payload.process === undefined &&
      e.payload.kind !== 'dbReply' &&
      e.payload.values.length > 0,
  );
  if (!recorded) return undefined;
  return `the replay command never marked its run's start nor made a recorded call: none of the run's recorded clock and random values were served, the command drew its own (${own || 'none'}); ${fix}`;
}

/**
 * A run recorded in-process whose processes (`1`, `2`…) drew values, replayed by a command that
 * started processes before its run's start: those were the command's (`0.n`), not the run's, and
 * drew their own values; said when some recorded process's values went to none.
 */
function processesBeforeRunStart(
  runStart: ExitDumps['runStart'],
  recording: Recording,
  drew: ReadonlySet<string>,
): string | undefined {
  const started = runStart?.processes ?? 0;
  if (started === 0) return undefined;
  const missed = new Set<string>();
  for (const e of recording.events)
    if (
      e.type === 'nondeterminism' &&
      e.payload.process !== undefined &&
      e.payload.kind !== 'dbReply' &&
      e.payload.values.length > 0 &&
      !drew.has(e.payload.process)
    )
      missed.add(e.payload.process);
  if (missed.size === 0) return undefined;
  const names = [...missed].sort();
  const shown = names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
  return `the replay command started ${started} process${started === 1 ? '' : 'es'} before its run's start: ${started === 1 ? 'it was' : 'they were'} the command's, not the run's, and drew ${started === 1 ? 'its' : 'their'} own clock and random values, so the values the run's process${names.length === 1 ? '' : 'es'} ${shown} drew when recorded went to none; call runInput() (or record()) in the replay command before the agent function starts them`;
}

/** The value kinds (sandbox/preload/shared-nondeterminism.mjs) as a user reads them. */
const VALUE_KINDS: Record<string, string> = {
  clock: 'clock (Date)',
  hrtime: 'monotonic clock (performance.now, process.hrtime)',
  random: 'Math.random',
  uuid: 'randomUUID',
  randomBytes: 'random bytes',
};

/**
 * What only the agent's exit dumps and the replay's end can say: recorded answers and database
 * replies that went to the agent out of the recorded order, and values concurrent tasks may have swapped.
 */
export function orderWarnings(
  dumps: Pick<ExitDumps, 'unheld' | 'dbLate' | 'pastRecorded' | 'runStart'>,
  run: {
    options: ReplayOptions;
    recording: Recording;
    result: { worldMatches?: boolean };
    /** The processes that drew values in the replay, by name ('' the agent's own). */
    drew: ReadonlySet<string>;
  },
): string[] {
  const { options, recording, result } = run;
  const warnings: string[] = [];
  const unmarked = unmarkedRunStart(dumps.runStart, recording);
  if (unmarked !== undefined) warnings.push(unmarked);
  const early = processesBeforeRunStart(dumps.runStart, recording, run.drew);
  if (early !== undefined) warnings.push(early);
  // The agent no longer draws before these answers what it drew when recorded (see docs/replay.md
  // "Values and answers in the recorded order"): each waited out the bound.
  if (dumps.unheld > 0)
    warnings.push(
      `${dumps.unheld} recorded answer${dumps.unheld === 1 ? '' : 's'} went to the agent at the bound (100 ms to 2 s) before its process had drawn the clock and random values it had drawn when recorded: the agent draws them differently now`,
    );
  // Tasks waiting on the database resumed in another order than recorded (docs/replay.md
  // "Database replies in the recorded order"): the values they drew may be each other's.
  if (dumps.dbLate > 0)
    warnings.push(
      `${dumps.dbLate} database repl${dumps.dbLate === 1 ? 'y' : 'ies'} went to the agent as ${dumps.dbLate === 1 ? 'it' : 'they'} came, not in the recorded order (each waits 2 s at most): the agent queries differently now, or its concurrent transactions met in another order${options.dbSandbox === 'template' || options.dbSandbox === 'testcontainers' ? '' : ' (the embedded PGlite sandbox runs one transaction at a time; --db <url> --db-sandbox template runs them at once, as recorded)'}`,
    );
  // An exact replay's processes drew more values than were recorded: the ones past the end were
  // made up (docs/replay.md "Nondeterminism"), so what the agent saw is not what it saw.
  const past = Object.entries(dumps.pastRecorded).filter(([, n]) => n > 0);
  if (options.mode === 'exact' && past.length > 0)
    warnings.push(
      `the agent drew ${valueCounts(Object.fromEntries(past))} past the recorded ones: it draws more now than when recorded (a read that depends on timing, such as a poll or a heartbeat, or changed code); those went on from the last recorded value, not as recorded`,
    );
  // Tasks that read the database at once may have taken each other's values (docs/replay.md).
  if (!dbOrderOf(options) && result.worldMatches === false && concurrentDatabaseWork(recording.events))
    warnings.push(
      "the agent's tasks read the database over several connections at once and drew clock and random values after its replies: a replay's database answers in its own order, so they may have taken each other's recorded values; --db-order hands the replies over in their recorded order",
    );
  return warnings;
}
