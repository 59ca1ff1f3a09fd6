// Types of process-tree.mjs for the TypeScript side (the replayer's watchdog).
export interface TreeProcess {
  pid: number;
  ppid: number;
  pgid: number;
  /** /proc's state letter: R running, S sleeping, D disk wait, T stopped, Z zombie. */
  state: string;
  /** CPU time used (user + system), in clock ticks. */
  ticks: number;
  command: string;
}

/** The process `root` and its descendants (and, with `group`, its process group's members), zombies left out. */
export declare function processTree(root: number, options?: { group?: boolean }): TreeProcess[];

/** Ends `root`'s whole tree with SIGKILL, round after round until none is left, and waits (up to 2 s) until they are gone; the pids signalled. */
export declare function killTree(root: number, options?: { group?: boolean; except?: readonly number[] }): number[];

/** One line on what the tree is doing: each process computing or waiting (sampled over `sampleMs`, default 300). */
export declare function describeTree(
  root: number,
  options?: { group?: boolean; sampleMs?: number; hide?: RegExp },
): Promise<string>;
