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
