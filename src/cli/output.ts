// What the CLI prints: its own words around a recording's strings (names, commands, messages),
// which are written out, never obeyed by the terminal (terminalSafe in src/recording).
import { terminalSafe } from '../recording/terminal-safe.js';

/** Writes text to stdout, control characters written out. */
export function writeOut(text: string): void {
  process.stdout.write(terminalSafe(text));
}

/** Writes text to stderr, control characters written out. */
export function writeErr(text: string): void {
  process.stderr.write(terminalSafe(text));
}
