// Where tapedeck's own files are: the package root, found from this module, so that the same
// code finds its preloads and package.json when run from source (src/…) and when bundled (dist/…).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The folder holding tapedeck's package.json (the checkout, or node_modules/tapedeck). */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`tapedeck: no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  root = dir;
  return dir;
}

/** A file shipped with tapedeck, by its path from the package root (e.g. 'sandbox/preload/replay.mjs'). */
export function packagePath(relative: string): string {
  return join(packageRoot(), relative);
}

/** tapedeck's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
}
