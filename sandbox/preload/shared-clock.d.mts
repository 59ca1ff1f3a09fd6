// Types of shared-clock.mjs for the TypeScript side (the in-process recorder).
/** Milliseconds since this process started, monotonic: never the agent's recorded or replayed `performance.now`. */
export declare const monotonicNow: () => number;
/** The time of a message: epoch milliseconds with sub-millisecond precision. */
export declare const nowMs: () => number;
