// tool(name, fn): wraps an in-process tool so each call is recorded as a tool.called step —
// directly when recording in-process, over IPC when the agent runs under `tapedeck record`.
// Outside a recording the wrapper just calls fn.
import type { StateType } from '../recording/index.js';

export const RECORDER_KEY = Symbol.for('tapedeck.recorder');

interface RecorderHook {
  tool(
    name: string,
    fn: (...args: unknown[]) => unknown,
    args: unknown[],
    options: { stateType?: StateType; mutating?: boolean },
  ): Promise<unknown>;
}

export interface ToolOptions {
  /** Default: guessed from the name (search/get/lookup… -> RETRIEVE, else API_CALL). */
  stateType?: StateType;
  /** Whether the tool changes the world; default false. */
  mutating?: boolean;
}

/**
 * @example
 * const searchFlights = tool('search_flights', async (args: { from: string; to: string }) => api.search(args));
 * await searchFlights({ from: 'AMS', to: 'LIS' }); // recorded as a RETRIEVE step
 */
export function tool<A extends unknown[], R>(
  name: string,
  fn: (...args: A) => R | Promise<R>,
  options: ToolOptions = {},
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    const hook = (globalThis as Record<symbol, unknown>)[RECORDER_KEY] as RecorderHook | undefined;
    if (hook === undefined) return await fn(...args);
    return (await hook.tool(name, fn as (...a: unknown[]) => unknown, args, options)) as R;
  };
}
