// Types of shared-python.mjs for the TypeScript side (the recorder's and the replayer's top-level command).
export declare const PYTHON_COVERED_ENV: 'TAPEDECK_PYTHON_COVERED';

/** A Python interpreter's program name: python, python3, python3.12, pypy3. */
export declare const PYTHON_PROGRAM: RegExp;

export interface UnhookedPython {
  /** The interpreter as the command (or a script's shebang) named it. */
  program: string;
  /** The option that keeps the hook out. */
  flag: '-S' | '-I' | '-E';
  /** -I/-E in the OS sandbox, on an interpreter with no sitecustomize of its own to cover. */
  uncovered?: boolean;
}

/** Where a command line runs: the covered interpreters (in the OS sandbox), its PATH and its folder. */
export interface PythonWhere {
  covered?: readonly string[] | undefined;
  PATH?: string | undefined;
  cwd?: string | undefined;
}

/** The Python process `argv` starts, when it runs without the hook (`covered`: in the OS sandbox). */
export declare function unhookedPython(argv: readonly string[], where?: PythonWhere): UnhookedPython | undefined;

/** The Python interpreters `argv` runs, as named: directly, through env or a shell's string, or by a shebang. */
export declare function pythonPrograms(argv: readonly string[], where?: PythonWhere): string[];

/** Tells `report` of every Python process this one starts without the hook. Returns undo(). */
export declare function reportUnhookedPython(report: (found: UnhookedPython) => void): () => void;
