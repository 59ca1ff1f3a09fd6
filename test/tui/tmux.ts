// A real terminal for end-to-end tests: a tmux server on its own socket, keys in, screen out.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface Terminal {
  /** Types keys: tmux key names ("j", "Enter", "Escape") one argument each. */
  keys(...keys: string[]): void;
  /** Types text literally. */
  type(text: string): void;
  /** The screen as text; with colours and attributes as escape codes when `escapes`. */
  screen(escapes?: boolean): string;
  /** Polls the screen until `test` holds; throws with the last screen after `timeoutMs`. */
  waitFor(test: string | RegExp | ((screen: string) => boolean), timeoutMs?: number): Promise<string>;
  kill(): void;
}

/** Starts `command` (a shell command line) in a detached session of `width` x `height`. */
export function openTerminal(command: string, width: number, height: number): Terminal {
  // A socket of its own: parallel test files never see each other's sessions.
  const socket = `tapedeck-e2e-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-u', '-L', socket, ...args], { encoding: 'utf8' });
  tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'e2e', '-x', String(width), '-y', String(height), command);
  const term: Terminal = {
    keys: (...keys) => {
      tmux('send-keys', '-t', 'e2e', ...keys);
    },
    type: (text) => {
      tmux('send-keys', '-t', 'e2e', '-l', text);
    },
    screen: (escapes = false) => tmux('capture-pane', '-p', '-t', 'e2e', ...(escapes ? ['-e'] : [])),
    async waitFor(test, timeoutMs = 60_000) {
      const check =
        typeof test === 'string'
          ? (s: string) => s.includes(test)
          : test instanceof RegExp
            ? (s: string) => test.test(s)
            : test;
      const until = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        try {
          last = term.screen();
        } catch (error) {
          last = `(capture failed: ${(error as Error).message})`;
        }
        if (check(last)) return last;
        if (Date.now() > until)
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${String(test)}; the screen:\n${last}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    kill: () => {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
  return term;
}

/** Quotes a word for the shell command line tmux runs. */
export const sh = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
