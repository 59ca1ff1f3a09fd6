// Reads the capture spool: one append-only NDJSON file per agent process in a folder, written
// synchronously by the preload (sandbox/preload/shared-ipc.mjs, loaded by src/record/preload/record.mjs). Returns complete new lines.
import { createDecipheriv, type Decipher } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';

interface SpoolFile {
  fd: number;
  offset: number;
  decoder: StringDecoder;
  tail: string;
  /** With a key: the file starts with a 16-byte IV, then AES-256-CTR; set once the IV is read. */
  decipher?: Decipher;
}

const IV_BYTES = 16;

const TS = /"ts":(\d+(?:\.\d+)?)/;

export class SpoolReader {
  private readonly files = new Map<string, SpoolFile>();

  /** `key`: the 32-byte key (hex) the preload encrypts its spool file with (TAPEDECK_RECORD_SPOOL_KEY). */
  constructor(
    readonly dir: string,
    private readonly key?: string,
  ) {}

  /**
   * Every complete line appended since the last call. Each file keeps its own order; lines of
   * different processes are interleaved by the time stamp they carry (`"ts":`, near the start).
   */
  read(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const perFile: Array<Array<{ line: string; key: number }>> = [];
    for (const name of names) {
      // The agent processes' files (`<pid>-<time>.ndjson`); anything else there is not a spool (the start gate's token).
      if (!name.endsWith('.ndjson')) continue;
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
      if (this.key !== undefined && file.decipher === undefined) {
        if (size < IV_BYTES) continue;
        const iv = Buffer.alloc(IV_BYTES);
        if (readSync(file.fd, iv, 0, IV_BYTES, 0) < IV_BYTES) continue;
        file.decipher = createDecipheriv('aes-256-ctr', Buffer.from(this.key, 'hex'), iv);
        file.offset = IV_BYTES;
      }
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
      const plain = file.decipher ? file.decipher.update(buffer.subarray(0, got)) : buffer.subarray(0, got);
      const text = file.tail + file.decoder.write(plain);
      const parts = text.split('\n');
      file.tail = parts.pop() ?? '';
      const lines: Array<{ line: string; key: number }> = [];
      let key = 0;
      for (const line of parts) {
        if (line.length === 0) continue;
        const ts = TS.exec(line.slice(0, 200));
        if (ts) key = Number(ts[1]);
        lines.push({ line, key });
      }
      if (lines.length > 0) perFile.push(lines);
    }
    if (perFile.length <= 1) return (perFile[0] ?? []).map((l) => l.line);
    const out: string[] = [];
    const heads = perFile.map(() => 0);
    for (;;) {
      let best = -1;
      for (let i = 0; i < perFile.length; i++) {
        const entry = perFile[i]![heads[i]!];
        if (entry !== undefined && (best < 0 || entry.key < perFile[best]![heads[best]!]!.key)) best = i;
      }
      if (best < 0) return out;
      out.push(perFile[best]![heads[best]!]!.line);
      heads[best]!++;
    }
  }

  close(): void {
    for (const file of this.files.values()) closeSync(file.fd);
    this.files.clear();
  }
}
