// The recording format's files (src/recording/schema.ts): one file's entry, its inline content and
// its checks, and fs.json.
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { isWellFormedText } from './body.js';
import { Sha256 } from './schema-fields.js';

/**
 * File contents up to this many bytes are kept in their entry (`text` or `base64`) instead of a
 * blob file: creating a file is the costly part of world capture (0.1-0.5 ms of kernel time
 * each on some disks), and a workspace is mostly small files. Readers refuse larger inline content.
 */
export const INLINE_FILE_MAX = 4096;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * One file's entry in a snapshot or a change: its mode, size and the sha256 of its bytes. The
 * bytes are the blob of that sha256 (blobs/sha256/…), or, for files up to INLINE_FILE_MAX bytes,
 * inline: `text` (the bytes were UTF-8) or `base64`. Recordings made before inline content have
 * blobs only. Inline content is checked as it is read: well-formed, `size` bytes, hashing to `sha256`.
 */
export const FileEntrySchema = z
  .object({
    mode: z.number().int(),
    size: z.number().int().nonnegative(),
    sha256: Sha256,
    text: z.string().max(INLINE_FILE_MAX, `inline content is over the ${INLINE_FILE_MAX}-byte limit`).optional(),
    base64: z
      .string()
      .max(Math.ceil(INLINE_FILE_MAX / 3) * 4, `inline content is over the ${INLINE_FILE_MAX}-byte limit`)
      .regex(BASE64, 'expected base64 (A-Z, a-z, 0-9, +, /, padded with =)')
      .optional(),
  })
  .strict()
  .superRefine((entry, ctx) => {
    const problem = inlineContentProblem(entry);
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
  });

/** What is wrong with an entry's inline content (none: undefined). */
function inlineContentProblem(entry: {
  size: number;
  sha256: string;
  text?: string | undefined;
  base64?: string | undefined;
}): { field: 'text' | 'base64'; message: string } | undefined {
  if (entry.text === undefined && entry.base64 === undefined) return undefined;
  if (entry.text !== undefined && entry.base64 !== undefined)
    return { field: 'base64', message: 'an entry holds its content as text or as base64, not both' };
  const field = entry.text !== undefined ? 'text' : 'base64';
  if (entry.text !== undefined && !isWellFormedText(entry.text))
    return { field, message: 'is not well-formed text (a lone surrogate): inline text is UTF-8' };
  const bytes = entry.text !== undefined ? Buffer.from(entry.text, 'utf8') : Buffer.from(entry.base64 ?? '', 'base64');
  if (bytes.length > INLINE_FILE_MAX)
    return { field, message: `inline content of ${bytes.length} bytes is over the ${INLINE_FILE_MAX}-byte limit` };
  if (bytes.length !== entry.size)
    return { field, message: `inline content is ${bytes.length} bytes, but the entry's size is ${entry.size}` };
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== entry.sha256)
    return { field, message: `inline content hashes to ${actual}, not to the entry's sha256 ${entry.sha256}` };
  return undefined;
}

/** fs.json: path (POSIX, relative to the root) -> entry; contents inline or blobs named by sha256. */
export const FsSnapshotSchema = z.object({ files: z.record(z.string(), FileEntrySchema) }).strict();
