// The Postgres backend (`pg://user@host:5432/db`): recordings as file lists over content-addressed
// blobs in three tables of that database, so a blob shared by recordings (a replay and its
// baseline, a sweep's k samples) is stored once, and a worker on any machine can pull a recording.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TapedeckError } from '../../recording/errors.js';
import { ManifestSchema } from '../../recording/schema.js';
import { openPostgres } from '../sql.js';
import { checkStoredFiles, checkStoreId, type RecordingFile, recordingToPut } from './files.js';
import { notFound } from './folder.js';
import type { StoreOpener } from './types.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tapedeck_store_blob (
  sha256 text PRIMARY KEY,
  size bigint NOT NULL,
  data bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS tapedeck_store_recording (
  id text PRIMARY KEY,
  content_sha256 text NOT NULL,
  manifest jsonb NOT NULL,
  files integer NOT NULL,
  bytes bigint NOT NULL,
  pushed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS tapedeck_store_file (
  recording_id text NOT NULL REFERENCES tapedeck_store_recording (id) ON DELETE CASCADE,
  path text NOT NULL,
  sha256 text NOT NULL REFERENCES tapedeck_store_blob (sha256),
  size bigint NOT NULL,
  PRIMARY KEY (recording_id, path)
);`;

/** `pg://user:pw@host:5432/db?opts` -> the postgres:// connection string and the URL shown (no password). */
function connection(url: URL): { connectionString: string; shown: string } {
  const pg = new URL(url.href.replace(/^pg:/, 'postgres:'));
  const shown = new URL(url.href);
  if (shown.password) shown.password = '***';
  return { connectionString: pg.href, shown: shown.href.replace(/\/$/, '') };
}

export const openPostgresStore: StoreOpener = async (url) => {
  const { connectionString, shown } = connection(url);
  let db: Awaited<ReturnType<typeof openPostgres>>;
  try {
    db = await openPostgres(connectionString);
    await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('tapedeck_store_schema'))`);
      for (const statement of SCHEMA.split(';').filter((s) => s.trim() !== '')) await tx.query(statement);
    });
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError(
      'STORE_UNREACHABLE',
      `cannot open the recording store ${shown}: ${(error as Error).message}`,
    );
  }

  const filesOf = async (id: string): Promise<RecordingFile[] | undefined> => {
    const rec = await db.query('SELECT 1 FROM tapedeck_store_recording WHERE id = $1', [id]);
    if (rec.rows.length === 0) return undefined;
    const r = await db.query(
      'SELECT path, sha256, size FROM tapedeck_store_file WHERE recording_id = $1 ORDER BY path',
      [id],
    );
    return r.rows.map((row) => ({ path: String(row.path), sha256: String(row.sha256), size: Number(row.size) }));
  };

  return {
    url: shown,
    async list() {
      const r = await db.query('SELECT id, manifest FROM tapedeck_store_recording ORDER BY pushed_at, id');
      return r.rows.flatMap((row) => {
        // A row another client wrote is checked like a manifest on disk; a bad one is left out.
        const manifest = ManifestSchema.safeParse(row.manifest);
        const id = String(row.id);
        return manifest.success ? [{ id, url: `${shown}/${id}`, manifest: manifest.data }] : [];
      });
    },
    async put(dir) {
      const { manifest, id, files, hash, bytes } = await recordingToPut(dir);
      const result = { id, url: `${shown}/${id}`, files: files.length, bytes };
      const present = new Set(
        (
          await db.query('SELECT sha256 FROM tapedeck_store_blob WHERE sha256 = ANY($1::text[])', [
            [...new Set(files.map((f) => f.sha256))],
          ])
        ).rows.map((row) => String(row.sha256)),
      );
      const sent = new Set<string>();
      for (const f of files) {
        if (present.has(f.sha256) || sent.has(f.sha256)) continue;
        const data = await readFile(join(dir, f.path));
        if (createHash('sha256').update(data).digest('hex') !== f.sha256)
          throw new TapedeckError('BAD_RECORDING', `${dir}/${f.path} changed while it was being pushed`);
        await db.query(
          'INSERT INTO tapedeck_store_blob (sha256, size, data) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING',
          [f.sha256, data.length, data],
        );
        sent.add(f.sha256);
      }
      const added = await db.transaction(async (tx) => {
        const inserted = await tx.query(
          `INSERT INTO tapedeck_store_recording (id, content_sha256, manifest, files, bytes)
           VALUES ($1, $2, $3::jsonb, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING id`,
          [id, hash, JSON.stringify(manifest), files.length, bytes],
        );
        if (inserted.rows.length === 0) {
          const existing = await tx.query('SELECT content_sha256 FROM tapedeck_store_recording WHERE id = $1', [id]);
          if (existing.rows[0]?.content_sha256 === hash) return false;
          throw new TapedeckError(
            'STORE_CONFLICT',
            `${shown} already holds a different recording with id ${id}: recordings are immutable; give the new one another id`,
          );
        }
        await tx.query(
          `INSERT INTO tapedeck_store_file (recording_id, path, sha256, size)
           SELECT $1, f.path, f.sha256, f.size FROM jsonb_to_recordset($2::jsonb) AS f(path text, sha256 text, size bigint)`,
          [id, JSON.stringify(files)],
        );
        return true;
      });
      return { ...result, reused: files.length - sent.size, added };
    },
    async contentHash(id) {
      checkStoreId(id, shown);
      const r = await db.query('SELECT content_sha256 FROM tapedeck_store_recording WHERE id = $1', [id]);
      return r.rows[0] ? String(r.rows[0].content_sha256) : undefined;
    },
    async copyTo(id, dir) {
      checkStoreId(id, shown);
      const files = await filesOf(id);
      if (!files) throw notFound(shown, id);
      checkStoredFiles(files, `${shown}/${id}`);
      if (existsSync(dir)) throw new TapedeckError('OUT_EXISTS', `${dir} already exists: pull into a new folder`);
      await mkdir(dir, { recursive: true });
      for (const f of files) {
        const r = await db.query('SELECT data FROM tapedeck_store_blob WHERE sha256 = $1', [f.sha256]);
        const data = r.rows[0]?.data;
        if (!(data instanceof Uint8Array))
          throw new TapedeckError('BAD_STORE', `${shown}/${id}: the content of ${f.path} is missing from the store`);
        if (data.length !== f.size || createHash('sha256').update(data).digest('hex') !== f.sha256)
          throw new TapedeckError('BAD_STORE', `${shown}/${id}: ${f.path} does not match its sha256 in the store`);
        const file = join(dir, f.path);
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, data, { flag: 'wx' });
      }
    },
    close: () => db.close(),
  };
};
