// The content-addressed upload against the real service (its blob routes, file storage and
// s3rver), every byte through a real counting proxy: a first upload sends the project, a second
// nothing but the query and the commit, one changed texture sends that texture; a connection cut
// mid-part costs that part only; an upload stopped half-way resumes with the parts sent.
import { describe, expect, it } from 'vitest';
import type { BlobUploadProgress } from '../../../shared/client/blob-upload.js';
import { NetworkError } from '../../../shared/client/errors.js';
import { startProxiedService, type ProxiedService, type StorageKind } from '../../helpers/proxied-service.js';
import { MiB, TEXTURE_BYTES, blobProjectPerTest, clientOf } from './blob-project.js';

const PART = 1 * MiB;
/** What the query, the commit and HTTP heads may add on top of the blob bytes. */
const OVERHEAD = 256 * 1024;

const t = blobProjectPerTest('rb-blob-upload-');

const partPuts = (e: ProxiedService): number =>
  e.proxy.requests().filter((r) => e.blobPut.test(`${r} HTTP/1.1`)).length;

describe.each<StorageKind>(['files', 's3'])('blob upload (%s storage)', (storage) => {
  it('sends the project once, then only what changed, and each commit creates a job', async () => {
    t.env = await startProxiedService(storage, { blobPartSizeBytes: PART });
    const client = clientOf(t.env);
    expect(await client.hasExtension('content-addressed-uploads')).toBe(true);

    const progress: BlobUploadProgress[] = [];
    const first = await client.uploadBlobs(t.project.files, {
      fileName: 'scene.zip',
      onProgress: (p) => progress.push(p),
    });
    expect(first.bytesSkipped).toBe(0);
    expect(first.bytesSent).toBe(t.project.uniqueBytes);
    // The textures do not compress and the copy is not sent again; the .blend goes gzip-encoded.
    const textures = 3 * TEXTURE_BYTES;
    expect(t.env.proxy.up()).toBeGreaterThan(textures);
    expect(t.env.proxy.up()).toBeLessThan(t.project.uniqueBytes + OVERHEAD);
    expect(progress.at(-1)).toMatchObject({
      bytesDone: t.project.uniqueBytes,
      bytesTotal: t.project.uniqueBytes,
      etaSeconds: 0,
    });
    expect(first.upload).toMatchObject({ fileName: 'scene.zip', fileCount: t.project.files.length });
    expect((await client.createJob({ slug: first.upload.slug })).status).toBe('created');

    t.env.proxy.reset();
    const same = await client.uploadBlobs(t.project.files, { fileName: 'scene.zip' });
    expect(same.bytesSent).toBe(0);
    expect(same.bytesSkipped).toBe(t.project.uniqueBytes);
    expect(partPuts(t.env)).toBe(0);
    expect(t.env.proxy.up()).toBeLessThan(1 * MiB);
    expect(same.upload.slug).not.toBe(first.upload.slug);
    expect((await client.createJob({ slug: same.upload.slug })).status).toBe('created');

    t.env.proxy.reset();
    const changed = await t.project.change('metal.exr');
    const third = await client.uploadBlobs(changed, { fileName: 'scene.zip' });
    expect(third.bytesSent).toBe(TEXTURE_BYTES);
    expect(third.bytesSkipped).toBe(t.project.uniqueBytes - TEXTURE_BYTES);
    expect(t.env.proxy.up()).toBeGreaterThan(TEXTURE_BYTES);
    expect(t.env.proxy.up()).toBeLessThan(TEXTURE_BYTES + OVERHEAD);
    expect((await client.createJob({ slug: third.upload.slug })).status).toBe('created');
  });

  it('sends only the cut part again when a connection dies mid-part', async () => {
    t.env = await startProxiedService(storage, { blobPartSizeBytes: PART });
    t.env.proxy.cut({ request: t.env.blobPut, afterBytes: 600 * 1024 });
    const client = clientOf(t.env);
    const retries: Error[] = [];
    const result = await client.uploadBlobs(t.project.files, {
      fileName: 'scene.zip',
      onRetry: (r) => retries.push(r.error),
    });

    expect(t.env.proxy.cuts()).toBe(1);
    expect(result.retries).toBe(1);
    expect(retries[0]).toBeInstanceOf(NetworkError);
    expect(partPuts(t.env)).toBe(result.partsSent + 1);
    // Every blob byte once, plus the ~600 KB of the part that was cut: never the whole project again.
    expect(t.env.proxy.up()).toBeGreaterThan(3 * TEXTURE_BYTES + 600 * 1024);
    expect(t.env.proxy.up()).toBeLessThan(t.project.uniqueBytes + PART + OVERHEAD);
    expect((await client.createJob({ slug: result.upload.slug })).status).toBe('created');
  });

  it('resumes an upload stopped half-way: the parts already stored are skipped', async () => {
    t.env = await startProxiedService(storage, { blobPartSizeBytes: PART });
    const client = clientOf(t.env);
    const stop = new AbortController();
    const stopped = await client
      .uploadBlobs(t.project.files, {
        fileName: 'scene.zip',
        concurrency: 1,
        signal: stop.signal,
        onProgress: (p) => {
          if (p.bytesDone >= t.project.uniqueBytes / 2) stop.abort(new Error('the artist closed the laptop'));
        },
      })
      .catch((e: unknown) => e);
    expect((stopped as Error).message).toBe('the artist closed the laptop');
    const sentBefore = t.env.proxy.up();

    t.env.proxy.reset();
    const resumed = await client.uploadBlobs(t.project.files, { fileName: 'scene.zip' });
    expect(resumed.bytesSkipped).toBeGreaterThan(t.project.uniqueBytes / 3);
    expect(resumed.bytesSkipped + resumed.bytesSent).toBe(t.project.uniqueBytes);
    // Both runs together sent the project about once: the cut part at most twice.
    expect(sentBefore + t.env.proxy.up()).toBeLessThan(t.project.uniqueBytes + PART + 2 * OVERHEAD);
    expect((await client.createJob({ slug: resumed.upload.slug })).status).toBe('created');
  });
});
