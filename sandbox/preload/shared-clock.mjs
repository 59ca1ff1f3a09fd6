// @ts-check
// The clock of the capture layers and the replay preload: Performance's own, never the agent's
// `performance.now` / `performance.timeOrigin` (shared-nondeterminism.mjs records and replays
// those), however late this module is loaded. Their own reads must not take the agent's values.
import { performance } from 'node:perf_hooks';

const proto = Object.getPrototypeOf(performance);
const protoNow = proto.now;
const origin = Object.getOwnPropertyDescriptor(proto, 'timeOrigin')?.get?.call(performance) ?? performance.timeOrigin;

/** Milliseconds since this process started, monotonic. @returns {number} */
export const monotonicNow = () => protoNow.call(performance);
/** The time of a message: epoch milliseconds with sub-millisecond precision. @returns {number} */
export const nowMs = () => origin + monotonicNow();
