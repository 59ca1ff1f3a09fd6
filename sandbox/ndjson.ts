// The parent's end of a preload's socket: newline-delimited JSON, read as complete lines. A chunk
// may end mid-line or mid-character; the rest waits for the next one. (The child's end is
// sandbox/preload/shared-ipc.mjs, which plain node loads without TypeScript.)
import type net from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/**
 * Calls `onLines` with the complete, non-empty lines of each chunk that arrives on `socket` (an
 * empty list when a chunk completes none), in order.
 */
export function onLines(socket: net.Socket, onLines: (lines: string[]) => void): void {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  socket.on('data', (data: Buffer) => {
    buffer += decoder.write(data);
    const lines: string[] = [];
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf('\n');
      if (line.length > 0) lines.push(line);
    }
    onLines(lines);
  });
}
