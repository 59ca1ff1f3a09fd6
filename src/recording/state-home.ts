// tapedeck's per-user state folder, one for everything it keeps about this machine and user:
// the seal key, the isolation probe's result and the leftover register (sandbox/leftovers.ts, in
// `live/`; TAPEDECK_STATE_DIR moves the register alone).
import { homedir } from 'node:os';
import { join } from 'node:path';

/** $TAPEDECK_HOME, else ${XDG_STATE_HOME:-~/.local/state}/tapedeck. */
export function stateHome(): string {
  const home = process.env.TAPEDECK_HOME;
  if (home) return home;
  return join(process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'tapedeck');
}
