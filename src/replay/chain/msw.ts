// msw for the answer chain, loaded only when a replay has mocks or a simulator: importing it pulls in
// graphql and more (~170 ms of CPU), which every other replay would pay at start for nothing.
import { createRequire } from 'node:module';
import type * as Msw from 'msw';

let loaded: typeof Msw | undefined;

/** Loads msw (the chain does before its mocks or simulator answer anything). */
export async function loadMsw(): Promise<typeof Msw> {
  loaded ??= await import('msw');
  return loaded;
}

/** msw's URL pattern match (`/users/:id`, wildcards); loads msw now if no chain has yet. */
export function matchRequestUrl(url: URL, path: string, base?: string): { matches: boolean } {
  loaded ??= createRequire(import.meta.url)('msw') as typeof Msw;
  return loaded.matchRequestUrl(url, path, base);
}
