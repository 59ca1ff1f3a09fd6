// The S3 recording store (s3://bucket/prefix) against an S3-compatible server running on this
// machine (@20minutes/s3rver, the maintained fork of s3rver: no Docker needed), and against MinIO
// through testcontainers where a Docker engine exists (here none does: that test says so and is
// skipped). Push (blobs stored once across recordings), list, pull byte for byte, every command
// by URL, immutability, a tampered object or a hostile index never reaching the disk, and
// record({ store }) shipping a finished recording and leaving nothing on this disk.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { listStore, localRecording, pullRecording, pushRecording } from '../../src/store/recordings/index.js';
import { example, tapedeck } from '../cli/run-cli.js';
import { startServer, type TestServer } from '../record/helpers.js';
import { copyWithId, filesOf } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-s3-'));
let server: S3rver;
let endpoint: string;
let store: string;
let api: TestServer;
const credentials = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };
const saved: Record<string, string | undefined> = {};

const withId = (source: string, id: string) => copyWithId(source, tmp, id);

beforeAll(async () => {
  for (const [k, v] of Object.entries(credentials)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: join(tmp, 's3rver'),
    configureBuckets: [{ name: 'recordings' }],
    // s3rver computes the signature of bucket-level requests (HEAD bucket, list) differently from
    // the current SDK (a trailing slash); object requests are signed and checked as on S3.
    allowMismatchedSignatures: true,
  });
  const address = (await server.run()) as AddressInfo;
  endpoint = `http://127.0.0.1:${address.port}`;
  store = `s3://recordings/team/prod?endpoint=${encodeURIComponent(endpoint)}`;
  api = await startServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
});

afterAll(async () => {
  await server?.close();
  await api?.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(tmp, { recursive: true, force: true });
});

describe('S3 store (s3://, an S3-compatible server on this machine)', () => {
  it('stores each distinct file once across recordings and gives a recording back byte for byte', async () => {
    const first = await pushRecording(example('openai-baseline'), store);
    expect(first).toMatchObject({ id: 'openai-baseline', added: true, reused: 0 });
    expect(first.url).toBe(`s3://recordings/team/prod/openai-baseline?endpoint=${encodeURIComponent(endpoint)}`);
    const copy = withId(example('openai-baseline'), 'baseline-copy');
    const second = await pushRecording(copy, store);
    expect(second).toMatchObject({ added: true, reused: second.files - 1 });
    expect((await pushRecording(example('openai-baseline'), store)).added).toBe(false);
    expect((await listStore(store)).map((r) => r.id).sort()).toEqual(['baseline-copy', 'openai-baseline']);
    const out = join(tmp, 'pulled');
    await pullRecording(first.url, out);
    expect(filesOf(out)).toEqual(filesOf(example('openai-baseline')));
    // Content-addressed: the second recording added one object (its manifest) and its index.
    const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1' });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'recordings', Prefix: 'team/prod/blobs/' }));
    expect(listed.KeyCount).toBe(first.files + 1);
    s3.destroy();
  });

  it('every command takes the recording by URL, and a different recording with an id in use is refused', async () => {
    const url = `s3://recordings/team/prod/openai-baseline?endpoint=${encodeURIComponent(endpoint)}`;
    const cwd = mkdtempSync(join(tmp, 'cli-'));
    const [verify, ledger, list] = await Promise.all([
      tapedeck(['verify', url], { cwd }),
      tapedeck(['ledger', url, '--json'], { cwd }),
      tapedeck(['list', store], { cwd }),
    ]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(ledger.code, ledger.stderr).toBe(0);
    expect(list.stdout).toContain('openai-baseline');
    // Pushed from a committed example made elsewhere: its command runs only when trusted.
    const replayed = await tapedeck(['replay', url, '--trust-recording', '--json', '--out', join(cwd, 'replay')], {
      cwd,
    });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout).divergences).toEqual([]);
    const impostor = withId(example('openai-fixed-stream'), 'openai-baseline-x');
    const manifest = JSON.parse(readFileSync(join(impostor, 'manifest.json'), 'utf8')) as { id: string };
    manifest.id = 'openai-baseline';
    writeFileSync(join(impostor, 'manifest.json'), JSON.stringify(manifest));
    await expect(pushRecording(impostor, store)).rejects.toThrow(/already holds a different recording with id/);
  });

  it('a tampered object or a hostile index never reaches the disk', async () => {
    const pushed = await pushRecording(withId(example('anthropic-fixed'), 'to-tamper'), store);
    const s3 = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1' });
    const manifestSha = (await import('node:crypto'))
      .createHash('sha256')
      .update(readFileSync(join(tmp, 'to-tamper', 'manifest.json')))
      .digest('hex');
    await s3.send(
      new PutObjectCommand({ Bucket: 'recordings', Key: `team/prod/blobs/sha256/${manifestSha}`, Body: 'x' }),
    );
    const out = join(tmp, 'tampered');
    await expect(pullRecording(pushed.url, out)).rejects.toThrow(
      /manifest\.json is not the size|does not match its sha256/,
    );
    expect(existsSync(out)).toBe(false);
    const index = {
      format: 'tapedeck.store.s3/v1',
      id: 'hostile',
      contentSha256: 'a'.repeat(64),
      bytes: 1,
      manifest: {},
      files: [{ path: '../../escape.txt', sha256: manifestSha, size: 1 }],
    };
    await s3.send(
      new PutObjectCommand({
        Bucket: 'recordings',
        Key: 'team/prod/recordings/hostile.json',
        Body: JSON.stringify(index),
      }),
    );
    await expect(pullRecording(pushed.url.replace('to-tamper', 'hostile'), join(tmp, 'hostile-out'))).rejects.toThrow(
      /escapes the root/,
    );
    expect(existsSync(join(tmp, 'escape.txt'))).toBe(false);
    s3.destroy();
  });

  it('record({ store }) ships the finished recording and leaves nothing on this disk', async () => {
    const folder = join(tmp, 'staging');
    const run = await record({ folder, store, name: 'shipped' }, async () => {
      await fetch(`${api.url}/ping`).then((r) => r.text());
      return 'done';
    });
    expect(run.recorded).toBe(true);
    expect(run.dir).toBe(`s3://recordings/team/prod/${run.id}?endpoint=${encodeURIComponent(endpoint)}`);
    expect(readdirSync(folder)).toEqual([]);
    const local = await localRecording(run.dir, join(tmp, 'cache'));
    const recording = await readRecording(local);
    expect(recording.manifest).toMatchObject({ name: 'shipped', status: 'complete' });
    expect(recording.events.filter((e) => e.type === 'http.exchange')).toHaveLength(1);
  });

  it('an unreachable store leaves the recording where it was written, and says why', async () => {
    const folder = join(tmp, 'kept');
    const errors: unknown[] = [];
    const run = await record(
      {
        folder,
        store: `s3://no-such-bucket/x?endpoint=${encodeURIComponent(endpoint)}`,
        onRecorderError: (e) => errors.push(e),
      },
      async () => 1,
    );
    expect(errors.map((e) => (e as Error).message)).toEqual([expect.stringMatching(/no bucket no-such-bucket/)]);
    expect(run.dir.startsWith(folder)).toBe(true);
    expect((await readRecording(run.dir)).manifest.status).toBe('complete');
  });
});

/** Whether a Docker engine answers here (testcontainers needs one for MinIO). */
function dockerEngine(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

const docker = dockerEngine();
describe('S3 store against MinIO (testcontainers)', () => {
  it.skipIf(!docker)(
    'pushes and pulls a recording through a MinIO container',
    async () => {
      const { GenericContainer, Wait } = await import('testcontainers');
      const minio = await new GenericContainer('minio/minio:latest')
        .withCommand(['server', '/data'])
        .withEnvironment({ MINIO_ROOT_USER: 'tapedeck', MINIO_ROOT_PASSWORD: 'tapedeck-secret' })
        .withExposedPorts(9000)
        .withWaitStrategy(Wait.forHttp('/minio/health/ready', 9000))
        .start();
      const minioEndpoint = `http://${minio.getHost()}:${minio.getMappedPort(9000)}`;
      const env = { ...process.env };
      process.env.AWS_ACCESS_KEY_ID = 'tapedeck';
      process.env.AWS_SECRET_ACCESS_KEY = 'tapedeck-secret';
      try {
        const s3 = new S3Client({ endpoint: minioEndpoint, forcePathStyle: true, region: 'us-east-1' });
        const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
        await s3.send(new CreateBucketCommand({ Bucket: 'recordings' }));
        s3.destroy();
        const minioStore = `s3://recordings/ci?endpoint=${encodeURIComponent(minioEndpoint)}`;
        const pushed = await pushRecording(example('openai-baseline'), minioStore);
        const out = join(tmp, 'from-minio');
        await pullRecording(pushed.url, out);
        expect(filesOf(out)).toEqual(filesOf(example('openai-baseline')));
      } finally {
        process.env.AWS_ACCESS_KEY_ID = env.AWS_ACCESS_KEY_ID;
        process.env.AWS_SECRET_ACCESS_KEY = env.AWS_SECRET_ACCESS_KEY;
        await minio.stop();
      }
    },
    300_000,
  );
  it.skipIf(docker)('says why it cannot run: no Docker engine here for testcontainers (MinIO)', () => {
    expect(docker).toBe(false);
  });
});
