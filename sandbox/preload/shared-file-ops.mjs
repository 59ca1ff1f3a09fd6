// @ts-check
// The file operations the recorder makes FILE_READ / FILE_WRITE steps of (src/record/preload/
// record-files.mjs), by fs function name: the replay preload counts the same ones, so that
// `replay --until K` stops the agent before the step after K when it is one of them.

/** fs function -> [the step's name, its state type]. */
export const FILE_OPS = Object.freeze({
  readFile: ['read_file', 'FILE_READ'],
  writeFile: ['write_file', 'FILE_WRITE'],
  appendFile: ['append_file', 'FILE_WRITE'],
  rm: ['delete_file', 'FILE_WRITE'],
  unlink: ['delete_file', 'FILE_WRITE'],
  rename: ['rename_file', 'FILE_WRITE'],
});

/** The names of the steps file operations make. */
export const FILE_STEP_NAMES = Object.freeze([...new Set(Object.values(FILE_OPS).map(([name]) => name))]);
