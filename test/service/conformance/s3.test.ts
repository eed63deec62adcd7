// The S3 adapter against s3rver, which the test starts itself (so nothing here skips).
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStorage } from '../../../service/adapters/s3/s3-storage.js';
import { createS3Client } from '../../../service/adapters/s3/s3-client.js';
import { ObjectExistsError, ObjectTooLargeError } from '../../../service/ports/storage.js';
import { startS3, type TestS3 } from '../../helpers/s3.js';
import { objectStorageConformance } from './object-storage.js';

console.warn(
  'S3 tests run against s3rver, which checks presigned URLs for expiry and access key but does not verify ' +
    'SigV4 signatures: that a tampered S3 presigned URL (other key, longer expiry, other Content-Type) is ' +
    "refused is AWS's (or MinIO's) guarantee and is not covered here.",
);

objectStorageConformance('S3 (s3rver)', async () => {
  const s3 = await startS3();
  const storage = S3ObjectStorage.fromSettings(s3.settings, { credentials: s3.credentials });
  return {
    storage,
    async close() {
      storage.close();
      await s3.close();
    },
  };
});

describe('S3ObjectStorage on s3rver', () => {
  let s3: TestS3;
  let client: S3Client;
  let storage: S3ObjectStorage;
  /** Names of the S3 operations the adapter sent, in order (observed, not altered). */
  let sent: string[] = [];
  const inAMinute = () => new Date(Date.now() + 60_000);

  beforeAll(async () => {
    s3 = await startS3();
    client = createS3Client(s3.settings, { credentials: s3.credentials });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    // A prefix, as a deployment sharing a bucket would use; every key below lives under it.
    storage = new S3ObjectStorage({ client, bucket: s3.settings.bucket, prefix: 'deploy-a/' });
  });
  afterAll(async () => {
    client?.destroy();
    await s3?.close();
  });

  it('refuses a presigned URL signed with an access key the server does not know', async () => {
    await storage.put('keys/a.png', Readable.from([Buffer.from('a')]));
    const settings = { ...s3.settings, prefix: 'deploy-a/' };
    const stranger = S3ObjectStorage.fromSettings(settings, {
      credentials: { accessKeyId: 'NOT-A-KEY', secretAccessKey: 'x' },
    });
    try {
      const res = await fetch(await stranger.presignGet('keys/a.png', { expiresAt: inAMinute(), fileName: 'a.png' }));
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('InvalidAccessKeyId');
    } finally {
      stranger.close();
    }
  });

  it('refuses a presigned PUT past its expiry', async () => {
    // Signed an hour ago for a second: S3 judges it by its own clock, which no test can move.
    const anHourAgo = () => Date.now() - 3_600_000;
    const signedEarlier = new S3ObjectStorage({
      client,
      bucket: s3.settings.bucket,
      prefix: 'deploy-a/',
      now: anHourAgo,
    });
    const url = await signedEarlier.presignPut('late/scene.blend', {
      expiresAt: new Date(anHourAgo() + 1000),
      fileType: 'blend',
    });
    const res = await fetch(url, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'scene',
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('Request has expired');
    expect(await storage.stat('late/scene.blend')).toBeUndefined();
  });

  it('binds the Content-Type clients are told to send into the presigned PUT signature', async () => {
    const blend = new URL(await storage.presignPut('ct/a.blend', { expiresAt: inAMinute(), fileType: 'blend' }));
    const zip = new URL(await storage.presignPut('ct/a.zip', { expiresAt: inAMinute(), fileType: 'zip' }));
    expect(blend.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-type');
    expect(zip.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-type');
    // No checksum of an empty body baked into the URL (it would make every real upload fail on AWS).
    expect([...blend.searchParams.keys()].filter((k) => /checksum/i.test(k))).toEqual([]);
    const res = await fetch(zip, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: 'PK' });
    expect(res.status).toBe(200);
    expect(await storage.stat('ct/a.zip')).toEqual({ size: 2 });
  });

  it('clamps presigned URLs to the 7-day SigV4 maximum', async () => {
    const url = new URL(
      await storage.presignGet('any/x.png', { expiresAt: new Date(Date.now() + 30 * 86400_000), fileName: 'x.png' }),
    );
    expect(url.searchParams.get('X-Amz-Expires')).toBe(String(7 * 24 * 3600));
  });

  it('serves a Range request through a presigned GET with 206 and the right bytes', async () => {
    const data = randomBytes(10_000);
    await storage.put('range/frame.exr', Readable.from([data]));
    const url = await storage.presignGet('range/frame.exr', { expiresAt: inAMinute(), fileName: 'frame.exr' });
    const res = await fetch(url, { headers: { range: 'bytes=100-1099' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('bytes 100-1099/10000');
    expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(100, 1100))).toBe(true);
  });

  it('names the download in Content-Disposition, with an ASCII fallback for other names', async () => {
    await storage.put('cd/0001.png', Readable.from([Buffer.from('png')]));
    const plain = await fetch(
      await storage.presignGet('cd/0001.png', { expiresAt: inAMinute(), fileName: 'shot_0001.png' }),
    );
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-disposition')).toBe('attachment; filename=shot_0001.png');
    expect(plain.headers.get('content-type')).toBe('image/png');
    const accented = await fetch(
      await storage.presignGet('cd/0001.png', { expiresAt: inAMinute(), fileName: 'scène "1".png' }),
    );
    const cd = accented.headers.get('content-disposition') ?? '';
    expect(cd).toBe(`attachment; filename="sc?ne \\"1\\".png"; filename*=UTF-8''sc%C3%A8ne%20%221%22.png`);
  });

  it('puts a 20 MB stream as a multipart upload of several parts, with the right size and sha256', async () => {
    const data = randomBytes(20 * 1024 * 1024);
    // Socket-sized chunks, as a real upload arrives.
    const chunks = Array.from({ length: Math.ceil(data.length / 65_536) }, (_, i) =>
      data.subarray(i * 65_536, (i + 1) * 65_536),
    );
    sent = [];
    const r = await storage.put('big/render.zip', Readable.from(chunks));
    expect(r).toEqual({ size: data.length, sha256: createHash('sha256').update(data).digest('hex') });
    // 8 MiB parts: 8 + 8 + 4 MiB.
    expect(sent).toEqual([
      'HeadObjectCommand',
      'CreateMultipartUploadCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'UploadPartCommand',
      'CompleteMultipartUploadCommand',
    ]);
    expect(await storage.stat('big/render.zip')).toEqual({ size: data.length });
    expect((await buffer(await storage.get('big/render.zip'))).equals(data)).toBe(true);
  });

  it('refuses a multipart put past maxBytes and leaves no object behind', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const body = Readable.from(Array.from({ length: 20 }, () => chunk));
    sent = [];
    await expect(storage.put('big/too-large.zip', body, { maxBytes: 18 * 1024 * 1024 })).rejects.toBeInstanceOf(
      ObjectTooLargeError,
    );
    // The parts already sent are dropped (s3rver answers the abort with 405, which must not hide the refusal).
    expect(sent.at(-1)).toBe('AbortMultipartUploadCommand');
    expect(sent.filter((c) => c === 'CompleteMultipartUploadCommand')).toEqual([]);
    expect(await storage.stat('big/too-large.zip')).toBeUndefined();
  });

  it('keeps every key under its prefix, and deletePrefix removes a folder but not its namesakes', async () => {
    for (const k of ['jobs/1/a.png', 'jobs/1/sub/b.png', 'jobs/10/c.png'])
      await storage.put(k, Readable.from([Buffer.from(k)]));
    await expect(storage.put('jobs/1/a.png', Readable.from([Buffer.from('again')]))).rejects.toBeInstanceOf(
      ObjectExistsError,
    );
    await storage.deletePrefix('jobs/1');
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: s3.settings.bucket, Prefix: 'deploy-a/jobs/' }),
    );
    expect((listed.Contents ?? []).map((o) => o.Key)).toEqual(['deploy-a/jobs/10/c.png']);
  });
});

describe('S3ObjectStorage listings longer than one page', () => {
  // In a child process: in-process s3rver cannot make continuation tokens on Node 17+ (see startS3).
  let s3: TestS3;
  let storage: S3ObjectStorage;
  beforeAll(async () => {
    s3 = await startS3({ childProcess: true });
    // Pages of 10 keys, so a few dozen objects take several ListObjectsV2 pages.
    storage = S3ObjectStorage.fromSettings(s3.settings, { credentials: s3.credentials, listPageSize: 10 });
  });
  afterAll(async () => {
    storage?.close();
    await s3?.close();
  });

  it('lists and deletes a prefix across several ListObjectsV2 pages', async () => {
    const keys = Array.from({ length: 35 }, (_, i) => `many/${String(i).padStart(2, '0')}.png`);
    await Promise.all(keys.map((k) => storage.put(k, Readable.from([Buffer.from('x')]))));
    await storage.put('many-not/keep.png', Readable.from([Buffer.from('k')]));
    expect((await storage.list('many')).map((o) => o.key)).toEqual(keys);
    await storage.deletePrefix('many/');
    expect(await storage.list('many/')).toEqual([]);
    expect(await storage.stat('many-not/keep.png')).toEqual({ size: 1 });
  });
});
