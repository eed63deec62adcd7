// How the blob upload recovers from what the real service answers: part URLs that expired
// (queried again, the parts already stored kept), a blob whose bytes do not match its sha256 (sent
// once more, then BlobChangedError naming the file), a commit answered BLOBS_MISSING (the missing
// blobs queried and sent, then committed again). On file storage: these paths are the client's,
// the same on any storage (blob-upload.test.ts runs the transfers on s3rver too). The API seam
// below passes real requests and real answers, holding or trimming one to set the scene.
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import type { BlobQueryResult } from '../../../shared/api/blob-upload.js';
import { uploadBlobs, type BlobUploadApi } from '../../../shared/client/blob-upload.js';
import { BlobChangedError } from '../../../shared/client/errors.js';
import { startProxiedService } from '../../helpers/proxied-service.js';
import { waitUntil } from '../../helpers/e2e.js';
import { MiB, blobProjectPerTest, clientOf } from './blob-project.js';

const t = blobProjectPerTest('rb-blob-recovery-');

/** The client's own API calls, with a hook on each query's answer. */
function seam(
  client: RenderJobClient,
  onAnswer: (answer: BlobQueryResult, n: number) => Promise<BlobQueryResult> | BlobQueryResult,
): BlobUploadApi & { queries: number; commits: number } {
  const api = {
    queries: 0,
    commits: 0,
    queryBlobs: async (body: Parameters<BlobUploadApi['queryBlobs']>[0], o: { signal?: AbortSignal | undefined }) =>
      onAnswer(await client.queryBlobs(body, o), ++api.queries),
    commitUpload: (body: Parameters<BlobUploadApi['commitUpload']>[0], o: { signal?: AbortSignal | undefined }) => {
      api.commits++;
      return client.commitUpload(body, o);
    },
  };
  return api;
}

const passedExpiry = (answer: BlobQueryResult) =>
  waitUntil('the part URLs to expire', () => Date.now() > Date.parse(answer.expiresAt) + 1000, { timeoutMs: 20_000 });

describe('blob upload recovery (files storage)', () => {
  it('queries again when the service answers URL_EXPIRED, and completes with the new URLs', async () => {
    t.env = await startProxiedService('files', { blobPartSizeBytes: 1 * MiB, uploadUrlTtlSeconds: 2 });
    const client = clientOf(t.env);
    const api = seam(client, async (answer, n) => {
      if (n > 1) return answer;
      // Hold the first answer until its URLs expired, and hide that from the client: the
      // service's 403 URL_EXPIRED is what it learns it from.
      await passedExpiry(answer);
      return { ...answer, expiresAt: new Date(Date.now() + 3600_000).toISOString() };
    });
    const result = await uploadBlobs(api, t.project.files, { fileName: 'scene.zip', concurrency: 1 });
    expect(api.queries).toBeGreaterThanOrEqual(2);
    const refused = t.env.svc.logs
      .join('')
      .split('\n')
      .filter((l) => l.includes('"statusCode":403') && l.includes('"res"'));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(result.bytesSent).toBe(t.project.uniqueBytes);
    expect((await client.createJob({ slug: result.upload.slug })).status).toBe('created');
  });

  it('queries again without sending when the answer expired before its parts went out', async () => {
    t.env = await startProxiedService('files', { blobPartSizeBytes: 1 * MiB, uploadUrlTtlSeconds: 2 });
    const client = clientOf(t.env);
    const api = seam(client, async (answer, n) => {
      if (n === 1) await passedExpiry(answer);
      return answer;
    });
    const result = await uploadBlobs(api, t.project.files, { fileName: 'scene.zip' });
    expect(api.queries).toBeGreaterThanOrEqual(2);
    expect(result.bytesSent).toBe(t.project.uniqueBytes);
    expect((await client.createJob({ slug: result.upload.slug })).status).toBe('created');
  });

  it('sends a blob whose hash does not match once more, then fails naming the file', async () => {
    t.env = await startProxiedService('files', { blobPartSizeBytes: 1 * MiB });
    const client = clientOf(t.env);
    // stone.jpg changes after it was hashed: same size, other bytes.
    const stone = t.project.files.find((f) => f.path.endsWith('stone.jpg'));
    if (!stone) throw new Error('fixture lacks stone.jpg');
    await writeFile(stone.source, randomBytes(stone.size));
    const err = await client.uploadBlobs(t.project.files, { fileName: 'scene.zip' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobChangedError);
    expect((err as BlobChangedError).files).toEqual([stone.source]);
    expect((err as Error).message).toMatch(/hash the project's files again/);
    // Every part of that blob went twice: the first mismatch is taken for bytes damaged on the way.
    const parts = Math.ceil(stone.size / MiB);
    const stonePuts = t.env.proxy.requests().filter((r) => r.includes(`/${stone.sha256}-${stone.size}/`));
    expect(stonePuts).toHaveLength(2 * parts);
  });

  it('sends the blobs a commit names missing, then commits again', async () => {
    t.env = await startProxiedService('files', { blobPartSizeBytes: 1 * MiB });
    const client = clientOf(t.env);
    const metal = t.project.files.find((f) => f.path.endsWith('metal.exr'));
    if (!metal) throw new Error('fixture lacks metal.exr');
    // The first answer forgets metal.exr, as if it had been held then collected before the commit.
    const api = seam(client, (answer, n) =>
      n === 1 ? { ...answer, missing: answer.missing.filter((m) => m.sha256 !== metal.sha256) } : answer,
    );
    const result = await uploadBlobs(api, t.project.files, { fileName: 'scene.zip' });
    expect(api.commits).toBe(2);
    expect(api.queries).toBe(2);
    expect(result.bytesSent).toBe(t.project.uniqueBytes);
    expect((await client.createJob({ slug: result.upload.slug })).status).toBe('created');
  });
});
