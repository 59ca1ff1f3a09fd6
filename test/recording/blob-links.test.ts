// A blob another recording already holds (a replay's pre-world) is hard-linked into the new
// recording instead of written again, but only when the source is a plain file of the right size:
// a link or a file of another size in its place is never linked, and the bytes are written.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { BlobStore, blobRelativePath, sha256Hex } from '../../src/recording/blobs.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-blob-links-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A blob file in a source recording folder. */
function sourceBlob(name: string, bytes: Buffer): string {
  const file = path.join(tmp, name, blobRelativePath(sha256Hex(bytes)));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  return file;
}

it('links a plain source file of the right size, and writes the bytes otherwise', () => {
  const bytes = Buffer.from('the pre-world file\n');
  const sha = sha256Hex(bytes);
  const linked = new BlobStore(path.join(tmp, 'linked'));
  const from = sourceBlob('source', bytes);
  linked.put(bytes, sha, from);
  const stored = path.join(tmp, 'linked', blobRelativePath(sha));
  expect(lstatSync(stored).ino).toBe(lstatSync(from).ino);
  expect(readFileSync(stored)).toEqual(bytes);

  // A symbolic link where the source blob should be: never linked (the new recording holds a file).
  const target = path.join(tmp, 'elsewhere.txt');
  writeFileSync(target, bytes);
  const viaLink = path.join(tmp, 'symlinked-source');
  symlinkSync(target, viaLink);
  const copied = new BlobStore(path.join(tmp, 'copied'));
  copied.put(bytes, sha, viaLink);
  const copy = path.join(tmp, 'copied', blobRelativePath(sha));
  expect(lstatSync(copy).isFile()).toBe(true);
  expect(lstatSync(copy).ino).not.toBe(lstatSync(target).ino);
  expect(readFileSync(copy)).toEqual(bytes);

  // A source of another size (not the bytes read): written, not linked.
  const other = sourceBlob('other', Buffer.from('something else entirely\n'));
  const sized = new BlobStore(path.join(tmp, 'sized'));
  sized.put(bytes, sha, other);
  const kept = path.join(tmp, 'sized', blobRelativePath(sha));
  expect(lstatSync(kept).ino).not.toBe(lstatSync(other).ino);
  expect(readFileSync(kept)).toEqual(bytes);

  // A missing source: written.
  const missing = new BlobStore(path.join(tmp, 'missing'));
  missing.put(bytes, sha, path.join(tmp, 'no-such-file'));
  expect(readFileSync(path.join(tmp, 'missing', blobRelativePath(sha)))).toEqual(bytes);
});
