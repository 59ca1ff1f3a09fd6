// useInput, one key at a time: ink hands a fast-typed or pasted run of plain characters
// ("g12\r" from a quick typist or tmux send-keys) to the handler as one string; this splits it.
import { type Key, useInput } from 'ink';

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** The single keypresses in one chunk of plain input. */
export function splitKeys(input: string, key: Key): Array<[string, Key]> {
  const chars = [...input];
  if (chars.length <= 1 || key.ctrl || key.meta) return [[input, key]];
  return chars.map((c): [string, Key] => {
    if (c === '\r' || c === '\n') return ['', { ...NO_KEY, return: true }];
    if (c === '\x7f' || c === '\b') return ['', { ...NO_KEY, backspace: true }];
    if (c === '\t') return ['', { ...NO_KEY, tab: true }];
    return [c, { ...NO_KEY, shift: /[A-Z]/.test(c) }];
  });
}

export function useKeys(handler: (input: string, key: Key) => void, options: { isActive: boolean }): void {
  useInput((input, key) => {
    for (const [i, k] of splitKeys(input, key)) handler(i, k);
  }, options);
}
