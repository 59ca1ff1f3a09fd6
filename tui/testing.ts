// Helpers for the TUI's component tests: type keys one at a time and wait for a frame.
export const tick = (ms = 0) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Writes each key, letting ink render (and React commit effects) between keys. */
export async function press(stdin: { write(data: string): void }, ...keys: string[]): Promise<void> {
  for (const key of keys) {
    stdin.write(key);
    await tick(25);
  }
}

export const KEY = {
  down: '\x1b[B',
  up: '\x1b[A',
  enter: '\r',
  escape: '\x1b',
  pageDown: '\x1b[6~',
  backspace: '\x7f',
} as const;

/** Waits until the last frame satisfies `test`; fails with the frame it last saw. */
export async function waitForFrame(
  lastFrame: () => string | undefined,
  test: string | RegExp | ((frame: string) => boolean),
  timeoutMs = 10_000,
): Promise<string> {
  const check =
    typeof test === 'string'
      ? (f: string) => f.includes(test)
      : test instanceof RegExp
        ? (f: string) => test.test(f)
        : test;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const frame = lastFrame() ?? '';
    if (check(frame)) return frame;
    if (Date.now() > until) throw new Error(`timed out waiting for ${String(test)}; last frame:\n${frame}`);
    await tick(20);
  }
}

/** ANSI colour codes (SGR 30-37, 39, 90-97, 38;5/38;2): what NO_COLOR must leave out. */
export const COLOR_CODE = /\x1b\[(3[0-8]|9[0-7])(;[0-9;]*)?m/;
