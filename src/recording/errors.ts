// Errors a user can cause: a stable code, and a message that says what, where and what to do.

/** A user-facing error. The CLI prints `message` (no stack) and exits with `exitCode`. */
export class TapedeckError extends Error {
  readonly code: string;
  readonly exitCode: number;
  constructor(code: string, message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TapedeckError';
    this.code = code;
    this.exitCode = options.exitCode ?? 2;
  }
}

export function isTapedeckError(error: unknown): error is TapedeckError {
  return error instanceof TapedeckError;
}

/**
 * A recording that cannot be read: names the file (relative to the recording directory),
 * the 1-based line when known, and the field (a path such as `payload.request.url`).
 */
export class RecordingError extends TapedeckError {
  readonly dir: string;
  readonly file: string;
  readonly line: number | undefined;
  readonly field: string | undefined;
  readonly problem: string;
  constructor(where: { dir: string; file: string; line?: number; field?: string }, problem: string, hint?: string) {
    const at = `${where.dir.replace(/\/+$/, '')}/${where.file}${where.line === undefined ? '' : `:${where.line}`}`;
    const field = where.field === undefined ? '' : ` field ${where.field}:`;
    super('BAD_RECORDING', `${at}:${field} ${problem}${hint ? ` (${hint})` : ''}`);
    this.name = 'RecordingError';
    this.dir = where.dir;
    this.file = where.file;
    this.line = where.line;
    this.field = where.field;
    this.problem = problem;
  }
}

/**
 * For commander's `.exitOverride(exitOnUsageError)`: a usage mistake (unknown option, missing
 * argument) exits 2 like every other bad input, so exit 1 keeps meaning a finding (bisect found a
 * bad step, diff found a difference, eval --strict saw a failure, verify saw a bad recording).
 * `--help` (exit 0) passes through.
 */
export function exitOnUsageError(error: { exitCode: number }): never {
  if (error.exitCode === 1) error.exitCode = 2;
  throw error;
}
