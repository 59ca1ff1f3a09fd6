// How this thread reaches the disk for a recording's folder and files: on libuv's pool (the
// default: an event loop that serves requests goes on while the disk works), or in the thread
// itself once `blockOnDisk()` was called. The recording thread (src/record/session-worker.ts)
// serves no one, and each call handed to the pool costs more CPU than the call (a wake-up of a
// pool thread and one of the thread back, ~27 a recording), which a busy server's cores pay.
import {
  close as closeFd,
  closeSync,
  fsync,
  fsyncSync,
  type MakeDirectoryOptions,
  mkdirSync,
  open as openFd,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { promisify } from 'node:util';

let blocking = false;

/** From now on this thread's recording I/O blocks the thread instead of using libuv's pool. */
export function blockOnDisk(): void {
  blocking = true;
}

/** Whether this thread's recording I/O blocks it (see blockOnDisk). */
export function blocksOnDisk(): boolean {
  return blocking;
}

const openAsync = promisify(openFd);
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(closeFd);

// Async functions either way: a failure is a rejection, as callers expect, whichever way it ran.
export const disk = {
  async mkdir(path: string, options?: MakeDirectoryOptions): Promise<void> {
    if (blocking) mkdirSync(path, options);
    else await mkdir(path, options);
  },
  async readdir(path: string): Promise<string[]> {
    return blocking ? readdirSync(path) : await readdir(path);
  },
  async rename(from: string, to: string): Promise<void> {
    if (blocking) renameSync(from, to);
    else await rename(from, to);
  },
  async rm(path: string, options: { recursive?: boolean; force?: boolean }): Promise<void> {
    if (blocking) rmSync(path, options);
    else await rm(path, options);
  },
  async open(path: string, flags: string): Promise<number> {
    return blocking ? openSync(path, flags) : await openAsync(path, flags);
  },
  async fsync(fd: number): Promise<void> {
    if (blocking) fsyncSync(fd);
    else await fsyncAsync(fd);
  },
  async close(fd: number): Promise<void> {
    if (blocking) closeSync(fd);
    else await closeAsync(fd);
  },
};
