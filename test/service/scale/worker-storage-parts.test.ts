// Objects over S3's 5 GiB single PUT: a keyless worker uploads them in parts, on URLs the service
// signs one part at a time, and the service completes the upload. The threshold is lowered here
// (multipartAboveBytes) so real multipart uploads run against s3rver with small objects.
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectExistsError } from '../../../service/ports/storage.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { runForJob } from '../../../service/job-scope.js';
import { objectStorageConformance } from '../conformance/object-storage.js';
import { startKeylessFarm, underJob, type KeylessFarm } from '../../helpers/keyless-worker.js';

const MiB = 1024 * 1024;
let farm: KeylessFarm;

beforeAll(async () => {
  farm = await startKeylessFarm();
});
afterAll(() => farm?.close());

objectStorageConformance(
  'remote worker storage, every object in parts (worker API, S3 on s3rver)',
  async () => {
    const held = await farm.holdJob(undefined, { multipartAboveBytes: 0, partSizeBytes: 5 * MiB });
    return { storage: underJob(held.storage, held.jobId), close: async () => undefined };
  },
  { presign: false },
);

describe('a keyless worker storing an object in parts', () => {
  it('sends each part on its own signed URL, and the object is whole; an existing key is never replaced', async () => {
    const held = await farm.holdJob(undefined, { multipartAboveBytes: 6 * MiB, partSizeBytes: 5 * MiB });
    const file = path.join(await farm.tempDir(), 'video.mp4');
    const data = Buffer.alloc(12 * MiB + 123);
    for (let i = 0; i < data.length; i += 4096) data[i] = i % 251;
    await writeFile(file, data);
    const key = `outputs/${held.workspaceId}/${held.jobId}/video/out.mp4`;
    const before = farm.svc.logs.join('').split(`${WORKER_API_PREFIX}/storage/multipart/part`).length;

    expect(await runForJob(held.jobId, () => held.storage.putFile(key, file))).toEqual({ size: data.length });
    const stored = await buffer(await runForJob(held.jobId, () => held.storage.get(key)));
    expect(createHash('sha256').update(stored).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    // 12 MiB and a bit in 5 MiB parts: three.
    expect(farm.svc.logs.join('').split(`${WORKER_API_PREFIX}/storage/multipart/part`).length - before).toBe(3);

    await expect(runForJob(held.jobId, () => held.storage.putFile(key, file))).rejects.toBeInstanceOf(
      ObjectExistsError,
    );
    // Another job's token cannot sign a part of this upload's key.
    const other = await farm.holdJob();
    const r = await fetch(`${farm.svc.origin}${WORKER_API_PREFIX}/storage/multipart/part`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jobId: other.jobId, key, uploadId: 'any', partNumber: 1 }),
    });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { name: string }).name).toBe('JOB_NOT_FOUND');
  });
});
