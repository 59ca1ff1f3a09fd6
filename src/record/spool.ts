// Reads the capture spool: one append-only NDJSON file per agent process in a folder, written
// synchronously by the preload (sandbox/preload/shared-ipc.mjs). Returns complete new lines.
import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';

interface SpoolFile {
  fd: number;
  offset: number;
  decoder: StringDecoder;
  tail: string;
}

export class SpoolReader {
  private readonly files = new Map<string, SpoolFile>();

  constructor(readonly dir: string) {}

  /** Every complete line appended since the last call, file by file in arrival order of files. */
  read(): string[] {
    const lines: string[] = [];
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return lines;
    }
    for (const name of names) {
      let file = this.files.get(name);
      if (file === undefined) {
        try {
          file = {
            fd: openSync(path.join(this.dir, name), 'r'),
            offset: 0,
            decoder: new StringDecoder('utf8'),
            tail: '',
          };
        } catch {
          continue;
        }
        this.files.set(name, file);
      }
      const size = fstatSync(file.fd).size;
      if (size <= file.offset) continue;
      const buffer = Buffer.allocUnsafe(size - file.offset);
      let got = 0;
      while (got < buffer.length) {
        const n = readSync(file.fd, buffer, got, buffer.length - got, file.offset + got);
        if (n === 0) break;
        got += n;
      }
      file.offset += got;
      // A line is complete once its newline is there; a half-written one waits for the next read.
      const text = file.tail + file.decoder.write(buffer.subarray(0, got));
      const parts = text.split('\n');
      file.tail = parts.pop() ?? '';
      for (const line of parts) if (line.length > 0) lines.push(line);
    }
    return lines;
  }

  close(): void {
    for (const file of this.files.values()) closeSync(file.fd);
    this.files.clear();
  }
}
