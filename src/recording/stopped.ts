// A run stopped before it ended by itself (a replay's watchdog, a signal to tapedeck): the one line
// every reader says about it (the reader's warning, the CLI's error, the TUI).
import type { Manifest, Stopped } from './types.js';

/** A limit as a person says it: 90000 -> "90s", 300000 -> "5m", 0 -> "none". */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms === 0) return 'none';
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/**
 * "timed out: no progress for 2s (the idle limit) after step 3 (GET http://api.test/a); the agent
 * was waiting: node agent.mjs (pid 12)".
 */
export function describeStop(stopped: Stopped): string {
  const why =
    stopped.reason === 'idle'
      ? `timed out: no progress for ${formatDuration(stopped.limitMs)} (the idle limit)`
      : stopped.reason === 'wall'
        ? `timed out: ran past the ${formatDuration(stopped.limitMs)} wall limit`
        : `interrupted${stopped.signal ? ` by ${stopped.signal}` : ''}`;
  const where =
    stopped.lastStep === 0
      ? 'before any step was served'
      : `after step ${stopped.lastStep}${stopped.last ? ` (${stopped.last})` : ''}`;
  return `${why} ${where}; the agent was ${stopped.doing}`;
}

/** The reader's warning for a recording whose run was stopped, or undefined when it ended by itself. */
export function stoppedWarning(manifest: Manifest): string | undefined {
  if (manifest.status !== 'timed-out' && manifest.status !== 'interrupted') return undefined;
  const what = manifest.replayOf ? 'replay' : 'run';
  if (!manifest.stopped) return `the ${what} was ${manifest.status}: it holds the steps made until then`;
  return `the ${what} ${describeStop(manifest.stopped)}: it holds the steps made until then`;
}
