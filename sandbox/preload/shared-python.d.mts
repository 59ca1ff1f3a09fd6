// Types of shared-python.mjs for the TypeScript side (the recorder's and the replayer's top-level command).
export declare const PYTHON_COVERED_ENV: 'TAPEDECK_PYTHON_COVERED';

export interface UnhookedPython {
  /** The interpreter as the command named it. */
  program: string;
  /** The option that keeps the hook out. */
  flag: '-S' | '-I' | '-E';
  /** -I/-E in the OS sandbox, on an interpreter with no sitecustomize of its own to cover. */
  uncovered?: boolean;
}

/** The Python process `argv` starts, when it runs without the hook (`covered`: in the OS sandbox). */
export declare function unhookedPython(
  argv: readonly string[],
  where?: { covered?: readonly string[] | undefined; PATH?: string | undefined },
): UnhookedPython | undefined;

/** Tells `report` of every Python process this one starts without the hook. Returns undo(). */
export declare function reportUnhookedPython(report: (found: UnhookedPython) => void): () => void;
