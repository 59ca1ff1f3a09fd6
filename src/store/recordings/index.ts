// Recording stores: where recordings live so that every worker can reach them, named by URL.
// `pg://user@host:5432/db/<id>` or `file:///srv/recordings/<id>` wherever a recording is taken;
// a plain path is a recording folder on this disk, as always.
//
// To add a backend (e.g. S3-compatible object storage): write <name>.ts exporting a StoreOpener
// that implements RecordingStore (types.ts) — contentHash, copyTo, put, list — and add one line to
// BACKENDS. The backend is imported only when a URL of its scheme is used.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { TapedeckError } from '../../recording/errors.js';
import { readRecording } from '../../recording/reader.js';
import type { Recording } from '../../recording/types.js';
import type { PutResult, RecordingStore, StoredRecording, StoreOpener } from './types.js';

export type { PutResult, RecordingStore, StoredRecording, StoreOpener } from './types.js';

const BACKENDS: Record<string, () => Promise<StoreOpener>> = {
  'file:': async () => (await import('./folder.js')).openFolderStore,
  'pg:': async () => (await import('./postgres.js')).openPostgresStore,
  's3:': async () => (await import('./s3.js')).openS3Store,
};

/** Where copies of recordings pulled from a remote store are kept ($TAPEDECK_CACHE_DIR, else .tapedeck/cache). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.TAPEDECK_CACHE_DIR ?? '.tapedeck/cache', 'recordings');
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** True when `ref` names a recording or store by URL (`pg://…`, `file://…`) rather than by a path. */
export function isStoreUrl(ref: string): boolean {
  return SCHEME.test(ref);
}

function parseUrl(ref: string): URL {
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new TapedeckError('BAD_STORE_URL', `${ref} is not a valid URL`);
  }
  if (!BACKENDS[url.protocol]) {
    throw new TapedeckError(
      'BAD_STORE_URL',
      `${ref}: no recording store for ${url.protocol}// (known: ${Object.keys(BACKENDS)
        .map((s) => `${s}//`)
        .join(', ')})`,
    );
  }
  return url;
}

/** Opens the store at a URL (one without a recording id). */
export async function openStore(storeUrl: string): Promise<RecordingStore> {
  const url = parseUrl(storeUrl);
  const open = await (BACKENDS[url.protocol] as () => Promise<StoreOpener>)();
  return open(url);
}

/** `<store url>/<id>` split into the store's URL and the id (the last path segment). */
export function splitRecordingUrl(ref: string): { storeUrl: string; id: string } {
  const url = parseUrl(ref);
  const segments = url.pathname.split('/');
  const id = decodeURIComponent(segments.pop() ?? '');
  if (id === '' || (segments.filter(Boolean).length === 0 && url.protocol === 'pg:')) {
    throw new TapedeckError(
      'BAD_STORE_URL',
      `${ref} names no recording: write <store>/<recording id>, e.g. pg://user@host:5432/db/<id>`,
    );
  }
  url.pathname = segments.join('/') || '/';
  return { storeUrl: url.href.replace(/\/$/, '').replace(/\/\?/, '?'), id };
}

async function withStore<T>(storeUrl: string, fn: (store: RecordingStore) => Promise<T>): Promise<T> {
  const store = await openStore(storeUrl);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * A local folder holding the recording `ref` names: `ref` itself when it is a path; for a URL, the
 * folder of a store on this disk, else a copy in `cacheDir` (kept while the recording is unchanged).
 * Callers read it with the recording reader, as any recording.
 */
export async function localRecording(ref: string, cacheDir = defaultCacheDir()): Promise<string> {
  if (!isStoreUrl(ref)) return ref;
  const { storeUrl, id } = splitRecordingUrl(ref);
  return withStore(storeUrl, async (store) => {
    const local = await store.localPath?.(id);
    if (local) return local;
    const hash = await store.contentHash(id);
    if (hash === undefined) {
      throw new TapedeckError(
        'NO_RECORDING',
        `${store.url}/${id}: no such recording in the store (tapedeck list ${store.url} shows what it holds)`,
      );
    }
    const dir = join(cacheDir, `${id}.${hash.slice(0, 16)}`);
    if (existsSync(join(dir, 'manifest.json'))) return dir;
    const tmp = join(cacheDir, `.${id}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await store.copyTo(id, tmp);
      await rename(tmp, dir).catch(async (error: NodeJS.ErrnoException) => {
        // Another process pulled the same recording meanwhile: theirs is as good.
        if (!existsSync(join(dir, 'manifest.json'))) throw error;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    return dir;
  });
}

/** Resolves many recording references; see localRecording. */
export function localRecordings(refs: readonly string[], cacheDir = defaultCacheDir()): Promise<string[]> {
  return Promise.all(refs.map((ref) => localRecording(ref, cacheDir)));
}

/** Stores a local recording folder in the store at `storeUrl`. */
export function pushRecording(dir: string, storeUrl: string): Promise<PutResult> {
  return withStore(storeUrl, (store) => store.put(dir));
}

/**
 * Writes the recording `ref` names into the new folder `out` and reads it as any recording is (a
 * store is as untrusted as a recording): a copy the reader refuses, or one cut short, is removed.
 */
export async function pullRecording(ref: string, out: string): Promise<Recording> {
  const { storeUrl, id } = splitRecordingUrl(ref);
  if (existsSync(out)) throw new TapedeckError('OUT_EXISTS', `${out} already exists: pull into a new folder`);
  try {
    await withStore(storeUrl, (store) => store.copyTo(id, out));
    return await readRecording(out);
  } catch (error) {
    await rm(out, { recursive: true, force: true });
    throw error;
  }
}

/** The recordings a store holds. */
export function listStore(storeUrl: string): Promise<StoredRecording[]> {
  return withStore(storeUrl, (store) => store.list());
}
