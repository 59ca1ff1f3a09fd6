// A module-resolution hook for tests: appends every package a process imports to $TAPEDECK_LOADED_LOG.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

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
  return next(specifier, context);
}
