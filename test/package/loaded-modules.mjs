// A module-resolution hook for tests: appends to $TAPEDECK_LOADED_LOG every package a process imports
// (its bare specifier) and every module of this repository outside node_modules (`local:` and its
// path from the repository's root, e.g. `local:src/replay/replay.ts`).
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

const ROOT = new URL('../../', import.meta.url).href;

if (process.env.TAPEDECK_LOADED_LOG && !process.env.TAPEDECK_LOADED_HOOKED) {
  process.env.TAPEDECK_LOADED_HOOKED = '1';
  register(import.meta.url, { data: { log: process.env.TAPEDECK_LOADED_LOG } });
}

let log;
export function initialize(data) {
  log = data?.log;
}

export async function resolve(specifier, context, next) {
  if (log && !specifier.startsWith('.') && !specifier.startsWith('/') && !/^(node|file|data):/.test(specifier)) {
    appendFileSync(log, `${specifier}\n`);
  }
  const resolved = await next(specifier, context);
  if (log && resolved.url.startsWith(ROOT) && !resolved.url.includes('/node_modules/')) {
    appendFileSync(log, `local:${resolved.url.slice(ROOT.length)}\n`);
  }
  return resolved;
}
