// Types of shared-watch.mjs for the TypeScript side (the recorder's fs tracker, the replay's world copy).
import type { watch } from 'node:fs';

export declare const MAX_FOLDERS: number;

/** Resolves once every change the kernel queued before the call has been read (two loop turns). */
export declare function readQueued(): Promise<void>;

export interface TreeWatch {
  readonly root: string;
  /** Watches the root and every folder under it (each before it is read), telling what it finds. */
  start(onFile?: (abs: string) => void, onFolder?: (abs: string) => void): void;
  /** Watches one more folder (and what is under it). */
  folder(dir: string): void;
  /** The paths touched since the last take, or undefined when only a walk can tell. */
  take(): Set<string> | undefined;
  /** Events seen so far. */
  readonly changes: number;
  /** Whether only a walk of the whole tree can tell what changed. */
  readonly blind: boolean;
  /** The number of folders watched. */
  readonly folders: number;
  close(): void;
}

/** Watches the tree under `root`; paths under `exclude` are not part of it. */
export declare function watchTree(
  root: string,
  options?: { exclude?: string[]; maxFolders?: number; watch?: typeof watch },
): TreeWatch;
