// RequeueStore conformance: a requeue is stored once per old job and frame selection, with its
// new job, atomically, also when two handles (service instances) race with the same request.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newRequeuedRecord } from '../../../../service/domain/requeue.js';
import type { JobReadModel, JobRecords, UploadStore } from '../../../../service/ports/jobs.js';
import type { RequeueStore } from '../../../../service/ports/requeues.js';
import { withHarness } from '../with-harness.js';
import { addJob, type StoreHarness } from './helpers.js';

type Store = RequeueStore &
  Pick<UploadStore, 'createUpload' | 'createJobFromUpload'> &
  Pick<JobRecords, 'get'> &
  Pick<JobReadModel, 'list'>;

export function requeueStoreConformance(open: () => Promise<StoreHarness<Store>>): void {
  describe('RequeueStore', () => {
    const withStore = withHarness(open);

    it(
      'stores a requeue and its new job once per old job and selection, across a reopen',
      withStore(async (h: StoreHarness<Store>) => {
        const ws = randomUUID();
        const old = await addJob(h.store, ws);
        const first = newRequeuedRecord(old, null);
        const link = { sourceJobId: old.job.id, selection: '', uploadSlug: null };
        expect(await h.store.createRequeue(link, first)).toEqual({ jobId: first.job.id, created: true });
        expect((await h.store.get(ws, first.job.id))?.internal.requeue).toEqual({
          fromJobId: old.job.id,
          requestedConfig: null,
          rerender: null,
        });
        // The same request again: nothing new, the first job answers.
        expect(await h.store.createRequeue(link, newRequeuedRecord(old, null))).toEqual({
          jobId: first.job.id,
          created: false,
        });
        const reopened = await h.reopen();
        expect(await reopened.createRequeue(link, newRequeuedRecord(old, null))).toEqual({
          jobId: first.job.id,
          created: false,
        });
        // Another selection is another requeue.
        const frames = newRequeuedRecord(old, ['1-3']);
        expect(await reopened.createRequeue({ ...link, selection: '1-3' }, frames)).toEqual({
          jobId: frames.job.id,
          created: true,
        });
        expect((await reopened.list(ws, { page: 1, pageSize: 10 })).total).toBe(3);

        const links = await reopened.requeueLinks(old.job.id);
        expect(links.from).toBeUndefined();
        expect(links.to.map((l) => [l.jobId, l.selection])).toEqual([
          [first.job.id, ''],
          [frames.job.id, '1-3'],
        ]);
        const back = await reopened.requeueLinks(frames.job.id);
        expect(back.from).toMatchObject({ sourceJobId: old.job.id, jobId: frames.job.id, selection: '1-3' });
        expect(back.to).toEqual([]);
      }),
    );

    it(
      'makes one job when two handles send the same requeue at once',
      withStore(async (h: StoreHarness<Store>) => {
        const ws = randomUUID();
        const old = await addJob(h.store, ws);
        const other = await h.other();
        const link = { sourceJobId: old.job.id, selection: '2', uploadSlug: null };
        const answers = await Promise.all([
          ...Array.from({ length: 4 }, () => h.store.createRequeue(link, newRequeuedRecord(old, ['2']))),
          ...Array.from({ length: 4 }, () => other.createRequeue(link, newRequeuedRecord(old, ['2']))),
        ]);
        expect(answers.filter((a) => a.created)).toHaveLength(1);
        expect(new Set(answers.map((a) => a.jobId)).size).toBe(1);
        // The old job and exactly one new one.
        expect((await h.store.list(ws, { page: 1, pageSize: 10 })).total).toBe(2);
        expect((await h.store.requeueLinks(old.job.id)).to).toHaveLength(1);
      }),
    );
  });
}
