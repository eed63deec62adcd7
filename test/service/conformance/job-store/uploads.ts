// UploadStore conformance: uploads, and the one job each may become. The job is read back
// through JobRecords to see what the claim stored.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newJobRecord } from '../../../../service/domain/jobs.js';
import { UploadClaimError, type JobRecords, type UploadStore } from '../../../../service/ports/jobs.js';
import { withHarness } from '../with-harness.js';
import { upload, type StoreHarness } from './helpers.js';

type Claimed = UploadStore & Pick<JobRecords, 'get' | 'getById'>;

export function uploadStoreConformance(open: () => Promise<StoreHarness<Claimed>>): void {
  describe('UploadStore', () => {
    const withStore = withHarness(open);

    it(
      "creates a job from an upload once, and only in the upload's workspace",
      withStore(async ({ store }: StoreHarness<Claimed>) => {
        const ws = randomUUID();
        const u = upload(ws);
        await store.createUpload(u);
        expect(await store.getUpload(randomUUID(), u.slug)).toBeUndefined();
        await store.completeUpload(u.slug, 10, 'abc');
        expect(await store.getUpload(ws, u.slug)).toMatchObject({ size: 10, sha256: 'abc', jobId: null });
        const rec = newJobRecord(u, undefined);
        await store.createJobFromUpload(u.slug, rec);
        await expect(store.createJobFromUpload(u.slug, newJobRecord(u, undefined))).rejects.toMatchObject({
          reason: 'UPLOAD_ALREADY_USED',
        });
        await expect(store.createJobFromUpload('up_missing', newJobRecord(u, undefined))).rejects.toBeInstanceOf(
          UploadClaimError,
        );
        expect((await store.getUpload(ws, u.slug))?.jobId).toBe(rec.job.id);
        expect((await store.get(ws, rec.job.id))?.job).toEqual(rec.job);
        expect(await store.get(randomUUID(), rec.job.id)).toBeUndefined();
        expect((await store.getById(rec.job.id))?.internal).toEqual(rec.internal);
      }),
    );
  });
}
