// The S3 backend (`s3://bucket/prefix`): recordings in S3-compatible object storage (AWS S3,
// MinIO, R2, …) as content-addressed objects under <prefix>blobs/sha256/<sha256>, shared across
// recordings, and one index object per recording, <prefix>recordings/<id>.json (its file list and
// manifest), written last: a recording is in the store once its index is. Credentials come from
// the AWS SDK's usual chain (AWS_ACCESS_KEY_ID…, a profile, an instance role), never from the URL;
// `?endpoint=http://host:port` (or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) names a server other
// than AWS, with path-style addressing unless `path-style=0`; `?region=` (default: the SDK's, else
// us-east-1). Files stream to and from disk: memory does not grow with a recording's size.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3';
import * as z from 'zod';
import { TapedeckError } from '../../recording/errors.js';
import { ManifestSchema } from '../../recording/schema.js';
import { checkStoredFiles, checkStoreId, contentHashOf, recordingFiles, recordingToPut } from './files.js';
import { notFound } from './folder.js';
import type { StoredRecording, StoreOpener } from './types.js';

const INDEX_FORMAT = 'tapedeck.store.s3/v1';
/** An index object larger than this is refused (a recording's file list and manifest). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

const IndexSchema = z
  .object({
    format: z.literal(INDEX_FORMAT),
    id: z.string(),
    contentSha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
    manifest: z.unknown(),
    files: z.array(z.object({ path: z.string(), sha256: z.string(), size: z.number().int().nonnegative() }).strict()),
  })
  .strict();
type Index = z.infer<typeof IndexSchema>;

/** What an s3:// URL says: bucket, key prefix (ending in '/' or empty), endpoint, region, path style. */
export function parseS3Url(url: URL): {
  bucket: string;
  prefix: string;
  endpoint?: string;
  region: string;
  pathStyle: boolean;
  shown: string;
} {
  const bucket = url.hostname;
  if (bucket === '')
    throw new TapedeckError('BAD_STORE_URL', `${url.href}: name a bucket, e.g. s3://my-bucket/recordings`);
  if (url.username || url.password) {
    throw new TapedeckError(
      'BAD_STORE_URL',
      `${url.protocol}//${bucket}${url.pathname}: put no credentials in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile)`,
    );
  }
  const path = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  const endpoint = url.searchParams.get('endpoint') ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  const region =
    url.searchParams.get('region') ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const pathStyle = url.searchParams.get('path-style') !== '0' && endpoint !== undefined;
  const query = url.search;
  return {
    bucket,
    prefix: path === '' ? '' : `${path}/`,
    ...(endpoint ? { endpoint } : {}),
    region,
    pathStyle,
    shown: `s3://${bucket}${path === '' ? '' : `/${path}`}${query}`,
  };
}

const missing = (error: unknown): boolean => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
};

async function readCapped(body: unknown, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw new TapedeckError('BAD_STORE', `${what} is larger than ${limit} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

export const openS3Store: StoreOpener = async (url) => {
  const where = parseS3Url(url);
  const sdk = await import('@aws-sdk/client-s3');
  const client: S3Client = new sdk.S3Client({
    region: where.region,
    ...(where.endpoint ? { endpoint: where.endpoint } : {}),
    forcePathStyle: where.pathStyle,
    maxAttempts: 3,
    // Checksums only where S3 requires them: S3-compatible servers do not all take the SDK's
    // streamed checksum trailers, and every object is checked by its sha256 here anyway.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // A recording's URL is <store>/<id> with the store's query (its endpoint) after it.
  const base = where.shown.replace(/\?.*$/, '');
  const storeUrl = where.shown;
  const refOf = (id: string) => `${base}/${id}${url.search}`;
  const blobKey = (sha: string) => `${where.prefix}blobs/sha256/${sha}`;
  const indexKey = (id: string) => `${where.prefix}recordings/${id}.json`;
  const fail = (error: unknown, doing: string): never => {
    if (error instanceof TapedeckError) throw error;
    const e = error as Error & { $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    const why = status === 403 ? 'access denied (403)' : `${e.message || e.name}${status ? ` (HTTP ${status})` : ''}`;
    throw new TapedeckError(
      'STORE_UNREACHABLE',
      `${base}: ${doing} failed: ${why}. Check the bucket, the endpoint and the AWS credentials.`,
      { cause: error },
    );
  };

  async function getIndex(id: string): Promise<Index | undefined> {
    checkStoreId(id, base);
    let body: unknown;
    try {
      const got = await client.send(new sdk.GetObjectCommand({ Bucket: where.bucket, Key: indexKey(id) }));
      if ((got.ContentLength ?? 0) > MAX_INDEX_BYTES)
        throw new TapedeckError('BAD_STORE', `${base}/${id}: its index is larger than ${MAX_INDEX_BYTES} bytes`);
      body = got.Body;
    } catch (error) {
      if (missing(error)) return undefined;
      return fail(error, `reading the index of ${id}`);
    }
    const text = (await readCapped(body, MAX_INDEX_BYTES, `${base}/${id}: its index`)).toString('utf8');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new TapedeckError('BAD_STORE', `${base}/${id}: its index is not JSON`);
    }
    const index = IndexSchema.safeParse(parsed);
    if (!index.success || index.data.id !== id) {
      throw new TapedeckError('BAD_STORE', `${base}/${id}: its index is not a tapedeck store index (${INDEX_FORMAT})`);
    }
    return index.data;
  }

  async function has(key: string): Promise<boolean> {
    try {
      await client.send(new sdk.HeadObjectCommand({ Bucket: where.bucket, Key: key }));
      return true;
    } catch (error) {
      if (missing(error)) return false;
      return fail(error, `looking for ${key}`);
    }
  }

  // A reachable bucket, or a clear error now rather than at the first recording.
  try {
    await client.send(new sdk.HeadBucketCommand({ Bucket: where.bucket }));
  } catch (error) {
    client.destroy();
    if (missing(error))
      throw new TapedeckError('STORE_UNREACHABLE', `${base}: there is no bucket ${where.bucket}; create it first.`);
    fail(error, 'opening the bucket');
  }

  return {
    url: storeUrl,
    async list() {
      const out: StoredRecording[] = [];
      let token: string | undefined;
      do {
        let page: ListObjectsV2CommandOutput;
        try {
          page = await client.send(
            new sdk.ListObjectsV2Command({
              Bucket: where.bucket,
              Prefix: `${where.prefix}recordings/`,
              ...(token ? { ContinuationToken: token } : {}),
            }),
          );
        } catch (error) {
          return fail(error, 'listing recordings');
        }
        for (const object of page.Contents ?? []) {
          const name = object.Key?.slice(`${where.prefix}recordings/`.length) ?? '';
          if (!name.endsWith('.json')) continue;
          const id = name.slice(0, -'.json'.length);
          // An index another client wrote is checked like a manifest on disk; a bad one is left out.
          const index = await getIndex(id).catch(() => undefined);
          const manifest = ManifestSchema.safeParse(index?.manifest);
          if (index && manifest.success) out.push({ id, url: refOf(id), manifest: manifest.data });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out.sort((a, b) => (a.manifest.createdAt < b.manifest.createdAt ? -1 : 1));
    },
    async put(dir) {
      const { manifest, id, files, hash, bytes } = await recordingToPut(dir);
      const result = { id, url: refOf(id), files: files.length, bytes };
      const existing = await getIndex(id);
      if (existing !== undefined) {
        if (existing.contentSha256 === hash) return { ...result, reused: files.length, added: false };
        throw new TapedeckError(
          'STORE_CONFLICT',
          `${base} already holds a different recording with id ${id}: recordings are immutable; give the new one another id`,
        );
      }
      let sent = 0;
      const seen = new Set<string>();
      for (const f of files) {
        if (seen.has(f.sha256)) continue;
        seen.add(f.sha256);
        if (await has(blobKey(f.sha256))) continue;
        try {
          await client.send(
            new sdk.PutObjectCommand({
              Bucket: where.bucket,
              Key: blobKey(f.sha256),
              Body: createReadStream(join(dir, f.path)),
              ContentLength: f.size,
              ContentType: 'application/octet-stream',
            }),
          );
        } catch (error) {
          fail(error, `storing ${f.path} of ${id}`);
        }
        sent++;
      }
      // The same files, read again: a recording changed while it was pushed is refused.
      if (contentHashOf(await recordingFiles(dir)) !== hash)
        throw new TapedeckError('BAD_RECORDING', `${dir} changed while it was being pushed`);
      const index: Index = { format: INDEX_FORMAT, id, contentSha256: hash, bytes, manifest, files };
      try {
        await client.send(
          new sdk.PutObjectCommand({
            Bucket: where.bucket,
            Key: indexKey(id),
            Body: JSON.stringify(index),
            ContentType: 'application/json',
            // Written once: a concurrent push of another recording with this id loses (where the server checks).
            IfNoneMatch: '*',
          }),
        );
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status !== 412 && status !== 409) fail(error, `storing the index of ${id}`);
        const now = await getIndex(id);
        if (now?.contentSha256 !== hash) {
          throw new TapedeckError(
            'STORE_CONFLICT',
            `${base} already holds a different recording with id ${id}: recordings are immutable; give the new one another id`,
          );
        }
        return { ...result, reused: files.length - sent, added: false };
      }
      return { ...result, reused: files.length - sent, added: true };
    },
    async contentHash(id) {
      return (await getIndex(id))?.contentSha256;
    },
    async copyTo(id, dir) {
      const index = await getIndex(id);
      if (index === undefined) throw notFound(base, id);
      checkStoredFiles(index.files, `${base}/${id}`);
      if (existsSync(dir)) throw new TapedeckError('OUT_EXISTS', `${dir} already exists: pull into a new folder`);
      await mkdir(dir, { recursive: true });
      try {
        for (const f of index.files) {
          let body: Readable;
          try {
            const got = await client.send(new sdk.GetObjectCommand({ Bucket: where.bucket, Key: blobKey(f.sha256) }));
            if (got.ContentLength !== undefined && got.ContentLength !== f.size)
              throw new TapedeckError('BAD_STORE', `${base}/${id}: ${f.path} is not the size its index says`);
            body = got.Body as Readable;
          } catch (error) {
            if (missing(error))
              throw new TapedeckError('BAD_STORE', `${base}/${id}: the content of ${f.path} is missing from the store`);
            return fail(error, `reading ${f.path} of ${id}`);
          }
          const file = join(dir, f.path);
          await mkdir(dirname(file), { recursive: true });
          const hash = createHash('sha256');
          let size = 0;
          await pipeline(
            body,
            async function* (source: AsyncIterable<Uint8Array>) {
              for await (const chunk of source) {
                size += chunk.byteLength;
                if (size > f.size)
                  throw new TapedeckError('BAD_STORE', `${base}/${id}: ${f.path} is larger than its index says`);
                hash.update(chunk);
                yield chunk;
              }
            },
            createWriteStream(file, { flags: 'wx' }),
          );
          if (size !== f.size || hash.digest('hex') !== f.sha256)
            throw new TapedeckError('BAD_STORE', `${base}/${id}: ${f.path} does not match its sha256 in the store`);
        }
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    },
    async close() {
      client.destroy();
    },
  };
};
