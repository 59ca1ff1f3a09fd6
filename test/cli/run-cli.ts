// Runs the real `tapedeck` CLI as a child process and captures what a user sees.
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '../..');
export const bin = join(root, 'bin/tapedeck.mjs');
export const example = (name: string): string => join(root, 'recordings/examples', name);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function tapedeck(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        cwd: options.cwd ?? root,
        env: { ...process.env, NO_COLOR: '1', ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        // A listing of hundreds of recordings as JSON passes execFile's 1 MB default.
        maxBuffer: 256 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve({ code: 0, stdout, stderr });
        if (typeof error.code === 'number') return resolve({ code: error.code, stdout, stderr });
        // Not the CLI's exit: killed at the timeout, or output past maxBuffer. Said, not a bare 1.
        resolve({ code: 1, stdout, stderr: `${stderr}[run-cli] ${error.signal ?? error.code ?? ''} ${error.message}` });
      },
    );
  });
}

/** A user mistake: one `tapedeck: …` line on stderr, no stack trace, a non-zero exit. */
export function expectOneLineError(run: CliRun, pattern: RegExp, code = 2): void {
  const lines = run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('npm warn'));
  if (run.code !== code || lines.length !== 1 || !pattern.test(lines[0] ?? '') || /\n\s+at /.test(run.stderr)) {
    throw new Error(`expected exit ${code} and one line matching ${pattern}, got exit ${run.code}:\n${run.stderr}`);
  }
}
