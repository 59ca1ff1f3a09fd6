// Types of shared-clock.mjs for the TypeScript side (the in-process recorder).
/** Milliseconds since this process started, monotonic: never the agent's recorded or replayed `performance.now`. */
export declare const monotonicNow: () => number;
/** The time of a message: epoch milliseconds with sub-millisecond precision. */
export declare const nowMs: () => number;
/** The last minute's load average per core, between 1 and 10: how much to stretch a wall-time bound on the agent. */
export declare const loadStretch: () => number;
