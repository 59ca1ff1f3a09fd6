// Types of shared-watch.mjs for the TypeScript side (the recorder's fs tracker, the replay's world copy).
/** Resolves once every change the kernel queued before the call has been read (two loop turns). */
export declare function readQueued(): Promise<void>;

/** What tells a file's content unchanged without reading it (from an lstat with `bigint: true`). */
export declare function statKey(st: import('node:fs').BigIntStats): string;

export interface TreeWatch {
  readonly root: string;
  /** Watches the root and every folder under it (each before it is read), telling what it finds. */
  start(onFile?: (abs: string) => void, onFolder?: (abs: string) => void): void;
  /** The paths touched since the last take, or undefined when only a walk can tell. */
  take(): Set<string> | undefined;
  /** The paths touched since the last take, as read so far, in the order first touched, without taking them. */
  pending(): readonly string[];
  /** Whether only a walk of the whole tree can tell what changed. */
  readonly blind: boolean;
  close(): void;
}

/** Watches the tree under `root`; paths under `exclude` are not part of it. */
export declare function watchTree(root: string, options?: { exclude?: string[] }): TreeWatch;
