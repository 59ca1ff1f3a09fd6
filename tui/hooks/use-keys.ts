// Keyboard input, one key at a time, always to the screen on top.
//
// Two things about ink's useInput that a TUI driven fast (a quick typist, tmux send-keys) runs
// into: a run of plain characters ("g12\r") reaches the handler as one string, and a handler is
// re-subscribed in a passive effect, which can lag a render behind, so a key that arrives right
// after a screen change reaches the old screen's handler. So the app subscribes ONE handler, once,
// that reads everything through refs; each screen puts its handler in the router while rendering.
import { type Key, useInput } from 'ink';
import { createContext, useContext } from 'react';

export type KeyHandler = (input: string, key: Key) => void;

/** Holds the handler of the screen rendered last (the one on top). */
export interface KeyRouter {
  current: KeyHandler | null;
}

export const KeyRouterContext = createContext<KeyRouter | null>(null);

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

/** The app's one subscription: splits chunks and hands each key to `dispatch` (which must read refs). */
export function useRootKeys(dispatch: KeyHandler): void {
  useInput((input, key) => {
    for (const [i, k] of splitKeys(input, key)) dispatch(i, k);
  });
}

/**
 * A screen's keys. Inside the app the handler goes to the router during render (no lag); a screen
 * rendered on its own (component tests) subscribes directly.
 */
export function useKeys(handler: KeyHandler, options: { isActive: boolean }): void {
  const router = useContext(KeyRouterContext);
  if (router && options.isActive) router.current = handler;
  useInput(
    (input, key) => {
      for (const [i, k] of splitKeys(input, key)) handler(i, k);
    },
    { isActive: options.isActive && !router },
  );
}
