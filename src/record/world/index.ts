// World capture: the fs root and the database schemas the user named, snapshotted before and
// after the run, with the changes in between drained at every step boundary.
import { noteLeftover } from '../../../sandbox/leftovers.js';
import { createDbTracker, type DbTracker, redactDbUrl } from '../../postgres/index.js';
import type {
  DbChangedPayload,
  FileContent,
  FsChangedPayload,
  Manifest,
  RecordingWriter,
} from '../../recording/index.js';
import type { FileLook } from '../protocol.js';
import { createFsTracker, type FsTracker } from './fs.js';

export { createDbTracker, type DbTracker } from '../../postgres/index.js';
export { createFsTracker, type FsTracker } from './fs.js';

export interface WorldOptions {
  fsRoot?: string;
  dbUrl?: string;
  dbSchemas?: string[];
  /** Absolute paths inside fsRoot that are not part of the world (the recording itself). */
  exclude?: string[];
  id: string;
}

export interface WorldCapture {
  readonly manifest: Manifest['world'];
  /** With a database: the application_name (PGAPPNAME) the agent's own sessions should carry, so parallel runs keep apart. */
  readonly dbApplicationName?: string;
  /** Takes the pre snapshot (after installing change capture) and writes it. */
  start(writer: RecordingWriter): Promise<void>;
  /**
   * The changes since the last drain. With `files` (read by the agent's process,
   * src/record/preload/record-quiet.mjs): those files applied first; `quiet`: nothing else is
   * looked for (the agent did not wait, so what the world holds now may be later); `busy`: files
   * (relative paths) the agent's file calls in flight are changing, left for a later drain.
   */
  drain(
    files?: FileLook[],
    quiet?: boolean,
    busy?: readonly string[],
  ): Promise<{ fs: FsChangedPayload[]; db: DbChangedPayload[] }>;
  /** Takes the post snapshot and writes it. */
  finish(writer: RecordingWriter): Promise<void>;
  /** Removes change capture from the database; always call it (also on failure). */
  close(): Promise<void>;
  /** What the recording lacks of the world, one warning each (files whose names the format cannot hold). */
  warnings(): string[];
}

export async function openWorld(
  options: WorldOptions,
  store: (bytes: Uint8Array) => FileContent,
): Promise<WorldCapture> {
  const fs: FsTracker | undefined =
    options.fsRoot === undefined
      ? undefined
      : createFsTracker(options.fsRoot, store, { exclude: options.exclude ?? [], watch: true });
  // A recorder that is killed cannot remove its capture: the next tapedeck command does.
  const dbUrl = options.dbUrl;
  let forget = dbUrl === undefined ? () => {} : noteLeftover({ kind: 'pg-capture', url: dbUrl });
  // Once the run's schema exists, the entry names it: the next command removes exactly that one.
  const onCaptureSchema = (schema: string) => {
    if (dbUrl === undefined) return;
    const forgetNamed = noteLeftover({ kind: 'pg-capture', url: dbUrl, schema });
    forget();
    forget = forgetNamed;
  };
  let db: DbTracker | undefined;
  try {
    db =
      dbUrl === undefined
        ? undefined
        : await createDbTracker(dbUrl, {
            ...(options.dbSchemas ? { schemas: options.dbSchemas } : {}),
            onCaptureSchema,
          });
  } catch (error) {
    forget();
    throw error;
  }
  const manifest: Manifest['world'] = {
    ...(fs === undefined ? {} : { fsRoot: fs.root }),
    ...(db === undefined || options.dbUrl === undefined
      ? {}
      : { db: { url: redactDbUrl(options.dbUrl), schemas: db.schemas, mode: 'snapshot' } }),
  };
  return {
    manifest,
    ...(db ? { dbApplicationName: db.applicationName } : {}),
    async start(writer) {
      try {
        await db?.start();
        const pre = { ...(fs ? { fs: await fs.snapshot() } : {}), ...(db ? { db: await db.snapshot() } : {}) };
        // Changes committed while the snapshot was taken are already in it.
        await db?.drain();
        writer.writeSnapshot('pre', pre);
      } catch (error) {
        await db?.close();
        forget();
        throw error;
      }
    },
    async drain(files, quiet, busy) {
      const applied = files === undefined || fs === undefined ? [] : fs.apply(files);
      if (quiet === true) return { fs: applied, db: [] };
      const [fsChanges, dbChanges] = await Promise.all([fs?.changes(busy) ?? [], db?.drain() ?? []]);
      return { fs: [...applied, ...fsChanges], db: dbChanges };
    },
    async finish(writer) {
      const post = { ...(fs ? { fs: await fs.snapshot() } : {}), ...(db ? { db: await db.snapshot() } : {}) };
      writer.writeSnapshot('post', post);
    },
    async close() {
      fs?.close();
      await db?.close();
      forget();
    },
    warnings() {
      const left = fs?.leftOut;
      if (left === undefined || left.count === 0) return [];
      const named = left.names.map((n) => JSON.stringify(n)).join(', ');
      const more = left.count > left.names.length ? ` and ${left.count - left.names.length} more` : '';
      return [
        `${left.count} file(s) under ${fs?.root} are not in the recording: their names are not paths a recording holds (a backslash or a control character): ${named}${more}`,
      ];
    },
  };
}
