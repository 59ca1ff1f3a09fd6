// Opens text in the user's $VISUAL / $EDITOR, with the terminal handed over to it while it runs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EditorTerminal {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
}

/**
 * Returns an editPrompt function for the app: writes the text to a temp file, runs the editor
 * on it (shell command, so `EDITOR="code --wait"` works), and resolves with the new text, or
 * undefined when it did not change.
 */
export function createPromptEditor(term: EditorTerminal, env: NodeJS.ProcessEnv = process.env) {
  return async (text: string): Promise<string | undefined> => {
    const editor = env.VISUAL || env.EDITOR;
    if (!editor) throw new Error('set $EDITOR (or press f to load the prompt from a file)');
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-prompt-'));
    const file = join(dir, 'system-prompt.txt');
    try {
      writeFileSync(file, text);
      const raw = term.stdin.isTTY ? term.stdin.isRaw : false;
      if (term.stdin.isTTY) term.stdin.setRawMode(false);
      term.stdout.write('\x1b[?1049l'); // leave the alternate screen: the editor draws its own
      const result = spawnSync(`${editor} "${file}"`, { shell: true, stdio: 'inherit' });
      term.stdout.write('\x1b[?1049h\x1b[2J\x1b[H');
      if (term.stdin.isTTY) term.stdin.setRawMode(raw);
      if (result.error) throw result.error;
      if (result.status !== 0) throw new Error(`${editor} exited with ${result.status ?? result.signal}`);
      const edited = readFileSync(file, 'utf8');
      return edited === text ? undefined : edited;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
