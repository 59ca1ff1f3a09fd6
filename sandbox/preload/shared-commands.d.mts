// Types of shared-commands.mjs for the TypeScript side (the recorder's top-level command, tests).

/** A Python interpreter's program name: python, python3, python3.12, pypy3. */
export declare const PYTHON_PROGRAM: RegExp;

/** Where a command line runs: the covered interpreters (in the OS sandbox), its PATH and its folder. */
export interface Where {
  covered?: readonly string[] | undefined;
  PATH?: string | undefined;
  cwd?: string | undefined;
}

/** The runs a command line starts: its program, or what env, a shell's `-c` string or a shebang run in its place. */
export declare function commandRuns(
  argv: readonly string[],
  where?: Where,
): Generator<{ program: string; args: string[] }, void, undefined>;

/** `#!interpreter [one argument]` of a file's first bytes, as the kernel reads it. */
export declare function shebangLine(head: string): string[] | undefined;

/** The files a program name may be: as named with a folder (from `cwd`), else each on PATH. */
export declare function candidates(program: string, where: Where): string[];

/** The first program `argv` starts that reaches a network service no capture layer sees (curl, psql), by name. */
export declare function unwatchedProgram(argv: readonly string[], where?: Where): string | undefined;

/** Tells `report` of every such program this process starts. Returns undo(). */
export declare function reportUnwatchedPrograms(report: (program: string) => void): () => void;
