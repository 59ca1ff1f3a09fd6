// Types of listening.mjs for the TypeScript side.
/** Whether a TCP port listens in the asking process's network namespace. */
export declare function listensHere(port: number): boolean;
/** The kernel's range for ports handed to listeners bound to port 0. */
export declare function ephemeralRange(): { low: number; high: number };
/** The loopback ports of strace lines' connects under way that the sandbox's own listeners hold. */
export declare function ownPorts(
  lines: string[],
  range: { low: number; high: number },
  listens?: (port: number) => boolean,
): number[];
