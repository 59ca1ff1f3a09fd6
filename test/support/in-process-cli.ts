// Commands run as the CLI runs them, in this process (commander's program with src/cli/main.ts's
// error handling, stdout and stderr captured), and the TUI's loader without a terminal: what the
// hostile-recording suites see of a command without a process start per run.
import path from 'node:path';
import { buildProgram } from '../../src/cli/program.js';
import { isTapedeckError } from '../../src/recording/index.js';
import { defaultServices } from '../../tui/data/engines.js';
import { indexSteps, stepDetail } from '../../tui/data/steps.js';

export interface Run {
  code: number | 'hang';
  stdout: string;
  stderr: string;
  ms: number;
  /** A thrown error that is not a TapedeckError (in-process): what the CLI would print with its stack. */
  crash?: string;
}

/** Runs a command as the CLI does (commander program, error handling of src/cli/main.ts), in this process. */
export async function runInProcess(args: string[], limitMs: number): Promise<Run> {
  const started = Date.now();
  let stdout = '';
  let stderr = '';
  const saved = {
    out: process.stdout.write.bind(process.stdout),
    err: process.stderr.write.bind(process.stderr),
    log: console.log,
    error: console.error,
    warn: console.warn,
  };
  const capture =
    (to: 'out' | 'err') =>
    (chunk: string | Uint8Array): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (to === 'out') stdout += text;
      else stderr += text;
      return true;
    };
  process.stdout.write = capture('out') as typeof process.stdout.write;
  process.stderr.write = capture('err') as typeof process.stderr.write;
  console.log = (...a: unknown[]) => capture('out')(`${a.join(' ')}\n`);
  console.error = console.warn = (...a: unknown[]) => capture('err')(`${a.join(' ')}\n`);
  process.exitCode = undefined;
  let code: number | 'hang' = 0;
  let crash: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const program = await buildProgram({ only: args[0] as string });
    const work = program.parseAsync(['node', 'tapedeck', ...args]).then(
      () => (typeof process.exitCode === 'number' ? process.exitCode : 0),
      (error: unknown) => {
        if (error !== null && typeof error === 'object' && 'exitCode' in error && 'code' in error) {
          const e = error as { exitCode: number; code: string };
          if (String(e.code).startsWith('commander.')) return e.exitCode === 1 ? 2 : e.exitCode;
        }
        if (isTapedeckError(error)) {
          stderr += `tapedeck: ${error.message}\n`;
          return error.exitCode;
        }
        crash = error instanceof Error ? (error.stack ?? error.message) : String(error);
        return 1;
      },
    );
    code = await Promise.race([
      work,
      new Promise<'hang'>((resolve) => {
        timer = setTimeout(() => resolve('hang'), limitMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    console.log = saved.log;
    console.error = saved.error;
    console.warn = saved.warn;
    process.exitCode = undefined;
  }
  return { code, stdout, stderr, ms: Date.now() - started, ...(crash !== undefined ? { crash } : {}) };
}

/** The TUI's loader on a recording: list, read, the timeline and every step's detail, ledger, score, world. */
export async function loadAsTui(dir: string, contract: string): Promise<Run> {
  const started = Date.now();
  const services = defaultServices({ contract });
  const notes: string[] = [];
  try {
    await services.listRecordings(path.dirname(dir));
    const recording = await services.readRecording(dir);
    const index = indexSteps(recording);
    for (const row of index.rows) stepDetail(recording, index, row.stepId);
    const last = index.rows.at(-1)?.stepId ?? 0;
    for (const panel of [
      await services.ledger(recording),
      await services.score(recording),
      await services.worldAt(recording, last),
    ]) {
      // A panel shows why it is unavailable; a JavaScript fault there is a crash all the same.
      if (!panel.ok) notes.push(panel.reason);
    }
  } catch (error) {
    if (!isTapedeckError(error)) {
      const e = error as Error;
      return { code: 1, stdout: '', stderr: '', ms: Date.now() - started, crash: e.stack ?? String(e) };
    }
    return { code: 2, stdout: '', stderr: `tapedeck: ${error.message}\n`, ms: Date.now() - started };
  }
  const fault = notes.find((n) =>
    /Maximum call stack|Cannot read propert|is not a function|is not iterable|Invalid (?:array|string) length/.test(n),
  );
  if (fault) return { code: 1, stdout: '', stderr: '', ms: Date.now() - started, crash: fault };
  return { code: 0, stdout: '', stderr: notes.join('\n'), ms: Date.now() - started };
}
