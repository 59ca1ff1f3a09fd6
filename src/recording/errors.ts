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
