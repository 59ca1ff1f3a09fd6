// Types of shared-file-ops.mjs for the TypeScript side (the replayer).
type FileOp = readonly [string, 'FILE_READ' | 'FILE_WRITE'];
/** fs function -> [the step's name, its state type]. */
export declare const FILE_OPS: Readonly<{
  readFile: FileOp;
  writeFile: FileOp;
  appendFile: FileOp;
  rm: FileOp;
  unlink: FileOp;
  rename: FileOp;
}>;
/** The names of the steps file operations make. */
export declare const FILE_STEP_NAMES: readonly string[];
/** The hooks a file step runs through (the recorder's barriers, the replay's reports). */
export interface FileStepHooks<Run> {
  before?(run: Run): void;
  fileOp<T>(
    run: Run,
    fileRun: () => Promise<T>,
    report: (ts: number, value: unknown, error: unknown) => Record<string, unknown>,
    paths: string[],
  ): Promise<T>;
  fileStart(run: Run, paths: string[]): { mine: unknown; ready: Promise<unknown> | undefined };
  fileDone(run: Run, message: Record<string, unknown>, paths: string[], mine?: unknown): void;
}
/** Wraps fs's file operations under `root` (FILE_OPS) as steps; returns the undo function. */
export declare function patchFileOps<Run>(
  root: string,
  hooks: FileStepHooks<Run>,
  current: () => Run | undefined,
  suppressed: () => boolean,
): () => void;
