// The name of a named development snapshot (named-snapshots.ts): one path segment, checked wherever
// a name comes in (the CLI, the project file's `seedSnapshot`, replay options) with one message.
import { TapedeckError } from '../recording/errors.js';

/** 1-64 letters, digits, `.`, `_` and `-`, starting with a letter or digit: never a path. */
export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** What a snapshot name must be, for messages. */
export const SNAPSHOT_NAME_RULE =
  "1-64 letters, digits, '.', '_' or '-' starting with a letter or digit (e.g. dev, staging-2026-11)";

/** The name, checked: a bad one is a one-line error (exit 2). */
export function checkSnapshotName(name: string): string {
  if (!SNAPSHOT_NAME.test(name)) {
    throw new TapedeckError(
      'BAD_SNAPSHOT_NAME',
      `snapshot name ${JSON.stringify(name.slice(0, 80))} is not ${SNAPSHOT_NAME_RULE}`,
    );
  }
  return name;
}
