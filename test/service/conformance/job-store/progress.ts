// ProgressStore conformance: live progress of running jobs. Jobs come from claimed uploads and
// are moved to the listed status through JobRecords.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { emptyProgress } from '../../../../service/domain/progress.js';
import type { JobRecords, ProgressStore } from '../../../../service/ports/jobs.js';
import { withHarness } from '../with-harness.js';
import { addJob, type JobSource, type StoreHarness } from './helpers.js';

type Tracked = JobSource & Pick<JobRecords, 'transition'> & ProgressStore;

export function progressStoreConformance(open: () => Promise<StoreHarness<Tracked>>): void {
  describe('ProgressStore', () => {
    const withStore = withHarness(open);

    it(
      'stores progress and lists it for jobs in the given states',
      withStore(async ({ store }: StoreHarness<Tracked>) => {
        const ws = randomUUID();
        const a = await addJob(store, ws);
        const b = await addJob(store, ws);
        await store.transition(a.job.id, ['created'], 'validating');
        await store.transition(b.job.id, ['created'], 'validating');
        expect(await store.getProgress(a.job.id)).toBeUndefined();
        await store.setProgress({ ...emptyProgress(a.job.id, 'validating'), framesTotal: 3, framesDone: 1 });
        expect((await store.getProgress(a.job.id))?.framesDone).toBe(1);
        const list = await store.listProgress(ws, ['validating']);
        expect(list.map((p) => [p.jobId, p.framesDone])).toEqual([
          [b.job.id, null],
          [a.job.id, 1],
        ]);
        expect(await store.listProgress(ws, ['rendering'])).toEqual([]);
        expect(await store.listProgress(randomUUID(), ['validating'])).toEqual([]);
      }),
    );
  });
}
