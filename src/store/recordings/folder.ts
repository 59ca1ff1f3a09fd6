// The folder backend: a directory of recordings (`file:///srv/recordings`), e.g. on a disk every
// worker mounts. Recordings are read in place; `put` copies a recording folder in atomically.
import { constants, existsSync, statSync } from 'node:fs';
import { copyFile, cp, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TapedeckError } from '../../recording/errors.js';
import { listRecordings, stagingPath } from '../../recording/index.js';
import { checkStoredFiles, checkStoreId, contentHashOf, recordingFiles, recordingToPut } from './files.js';
import type { RecordingStore, StoreOpener } from './types.js';

export const openFolderStore: StoreOpener = async (url) => {
  const root = fileURLToPath(url);
  if (existsSync(root) && !statSync(root).isDirectory())
    throw new TapedeckError('BAD_STORE', `${root} is a file, not a folder of recordings`);
  const storeUrl = pathToFileURL(root).href.replace(/\/$/, '');
  const folderOf = (id: string): string => {
    checkStoreId(id, storeUrl);
    return join(root, id);
  };
  const isRecording = (id: string): boolean => existsSync(join(folderOf(id), 'manifest.json'));
  const store: RecordingStore = {
    url: storeUrl,
    async list() {
      const found = await listRecordings(root, { depth: 1 });
      return found.flatMap(({ dir, manifest }) => {
        const id = dir.slice(root.length).replace(/^\/+/, '');
        return id.includes('/') ? [] : [{ id, url: `${storeUrl}/${id}`, manifest }];
      });
    },
    async put(dir) {
      const { id, files, hash, bytes } = await recordingToPut(dir);
      const result = { id, url: `${storeUrl}/${id}`, files: files.length, bytes };
      if (isRecording(id)) {
        if ((await store.contentHash(id)) === hash) return { ...result, reused: files.length, added: false };
        throw new TapedeckError(
          'STORE_CONFLICT',
          `${storeUrl} already holds a different recording with id ${id}: recordings are immutable; give the new one another id`,
        );
      }
      await mkdir(root, { recursive: true });
      // A temp name of the recording folder's kind: a killed put leaves a folder the next listing removes.
      const tmp = stagingPath(folderOf(id));
      try {
        await cp(dir, tmp, {
          recursive: true,
          filter: (src) =>
            !src
              .slice(dir.length)
              .split('/')
              .some((s) => s.startsWith('.')),
        });
        await rename(tmp, folderOf(id));
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
      return { ...result, reused: 0, added: true };
    },
    async contentHash(id) {
      return isRecording(id) ? contentHashOf(await recordingFiles(folderOf(id))) : undefined;
    },
    async copyTo(id, dir) {
      if (!isRecording(id)) throw notFound(storeUrl, id);
      if (existsSync(dir)) throw new TapedeckError('OUT_EXISTS', `${dir} already exists: pull into a new folder`);
      // Regular files only, listed first: a link or a FIFO in the store's folder is refused, never followed or opened.
      const from = folderOf(id);
      const files = await recordingFiles(from);
      checkStoredFiles(files, `${storeUrl}/${id}`);
      for (const f of files) {
        await mkdir(dirname(join(dir, f.path)), { recursive: true });
        await copyFile(join(from, f.path), join(dir, f.path), constants.COPYFILE_EXCL);
      }
    },
    async localPath(id) {
      return isRecording(id) ? folderOf(id) : undefined;
    },
    async close() {},
  };
  return store;
};

export function notFound(storeUrl: string, id: string): TapedeckError {
  return new TapedeckError(
    'NO_RECORDING',
    `${storeUrl}/${id}: no such recording in the store (tapedeck list ${storeUrl} shows what it holds)`,
  );
}
