// Types of shared-shell-words.mjs.

/** The simple commands of a POSIX shell's command string, each its words with quotes removed. */
export declare function shellCommands(script: string): string[][];
