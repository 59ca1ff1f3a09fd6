// What tapedeck gives the agent's processes, named for the preloads to keep: every process they
// start gets these variables back when it was started with an env of its own (see keepGivenEnv in
// sandbox/preload/shared-process.mjs, whose KEEP_ENV this is).
const KEEP_ENV = 'TAPEDECK_KEEP_ENV';

/**
 * `env` with TAPEDECK_KEEP_ENV naming the variables tapedeck set in it: those whose values differ
 * from `before` (the env it was made from), and `also`. NODE_OPTIONS is the preload's own (the
 * preload adds its import), and a process's name is its own.
 */
export function withKeptEnv<T extends Record<string, string | undefined>>(
  before: Record<string, string | undefined>,
  env: T,
  also: string[] = [],
): T {
  const names = new Set(also);
  for (const [name, value] of Object.entries(env)) if (value !== undefined && before[name] !== value) names.add(name);
  for (const name of ['NODE_OPTIONS', 'TAPEDECK_PROCESS', KEEP_ENV]) names.delete(name);
  return { ...env, [KEEP_ENV]: [...names].sort().join(',') };
}
