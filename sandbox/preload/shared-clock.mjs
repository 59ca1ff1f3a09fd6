// @ts-check
// The clock of the capture layers and the replay preload: Performance's own, never the agent's
// `performance.now` / `performance.timeOrigin` (shared-nondeterminism.mjs records and replays
// those), however late this module is loaded. Their own reads must not take the agent's values.
import os from 'node:os';
import { performance } from 'node:perf_hooks';

const proto = Object.getPrototypeOf(performance);
const protoNow = proto.now;
const origin = Object.getOwnPropertyDescriptor(proto, 'timeOrigin')?.get?.call(performance) ?? performance.timeOrigin;

/** Milliseconds since this process started, monotonic. @returns {number} */
export const monotonicNow = () => protoNow.call(performance);
/** The time of a message: epoch milliseconds with sub-millisecond precision. @returns {number} */
export const nowMs = () => origin + monotonicNow();

const loadavg = os.loadavg;
const cores = Math.max(1, os.availableParallelism());
/**
 * How much slower than an idle machine a process runs now: the last minute's load average per
 * core, at least 1 and at most 10. The replay's waits for the agent's next move that are bounded
 * in wall time (a WebSocket push waiting for the calls before it, a database reply waiting for its
 * turn, an answer waiting for the values drawn before it) are that bound times this: on a starved
 * machine the agent takes that much longer to get there, and must not be overtaken for it.
 * @returns {number}
 */
export function loadStretch() {
  // The load average is a minute's: read it at most once a second (os.loadavg() is a system call,
  // ~30 us; a replay asks at every answer that waits).
  const now = monotonicNow();
  if (now - stretchAt >= 1000) {
    stretch = Math.min(10, Math.max(1, (loadavg()[0] ?? 0) / cores));
    stretchAt = now;
  }
  return stretch;
}
let stretch = 1;
let stretchAt = Number.NEGATIVE_INFINITY;
