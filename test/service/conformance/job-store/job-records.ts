// JobRecords conformance: reading jobs, moving them through the state machine, updating them.
// Jobs come from claimed uploads (UploadStore), as in the service.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JobRecords } from '../../../../service/ports/jobs.js';
import { withHarness } from '../with-harness.js';
import { addJob, type JobSource, type StoreHarness } from './helpers.js';

type Records = JobSource & JobRecords;

export function jobRecordsConformance(open: () => Promise<StoreHarness<Records>>): void {
  describe('JobRecords', () => {
    const withStore = withHarness(open);

    it(
      'lists jobs whose outputs expired, oldest first, until they are marked deleted',
      withStore(async ({ store }: StoreHarness<Records>) => {
        const ws = randomUUID();
        const [a, b, c] = [await addJob(store, ws), await addJob(store, ws), await addJob(store, ws)];
        const at = (offsetMs: number) => ({
          isDeletedForClient: false,
          scheduledForDeletionAt: new Date(Date.now() + offsetMs).toISOString(),
        });
        await store.update(a.job.id, { output: at(-1000) });
        await store.update(b.job.id, { output: at(-5000) });
        await store.update(c.job.id, { output: at(60_000) });
        expect((await store.listExpired(new Date(), 10)).map((r) => r.job.id)).toEqual([b.job.id, a.job.id]);
        expect(await store.listExpired(new Date(), 1)).toHaveLength(1);
        await store.update(b.job.id, { output: { ...at(-5000), isDeletedForClient: true } });
        expect((await store.listExpired(new Date(), 10)).map((r) => r.job.id)).toEqual([a.job.id]);
      }),
    );

    it(
      'moves a job only from an expected status, and lets one of racing writers win',
      withStore(async ({ store }: StoreHarness<Records>) => {
        const rec = await addJob(store, randomUUID());
        expect(await store.transition(rec.job.id, ['validated'], 'booting')).toBeUndefined();
        const results = await Promise.all(
          [1, 2, 3, 4, 5].map(() => store.transition(rec.job.id, ['created'], 'validating')),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const moved = await store.transition(
          rec.job.id,
          ['validating'],
          'validated',
          { analysisId: rec.job.id },
          { validationConfig: { sceneToRender: 'S' } },
        );
        expect(moved?.job).toMatchObject({ status: 'validated', analysisId: rec.job.id });
        expect(moved?.internal.validationConfig).toEqual({ sceneToRender: 'S' });
        expect(moved!.job.updatedAt >= rec.job.updatedAt).toBe(true);
        expect(await store.transition(randomUUID(), ['created'], 'validating')).toBeUndefined();
        const updated = await store.update(rec.job.id, { normalizedSeconds: 12.5 });
        expect(updated?.job).toMatchObject({ status: 'validated', normalizedSeconds: 12.5, analysisId: rec.job.id });
      }),
    );

    it(
      "refuses a move the state machine forbids, whatever the job's status, and writes nothing",
      withStore(async ({ store }: StoreHarness<Records>) => {
        const rec = await addJob(store, randomUUID());
        await expect(store.transition(rec.job.id, ['created'], 'completed')).rejects.toThrow(
          /cannot move from "created" to "completed"/,
        );
        await expect(store.transition(rec.job.id, ['canceled'], 'rendering')).rejects.toThrow(/cannot move/);
        expect((await store.getById(rec.job.id))?.job.status).toBe('created');
      }),
    );

    it(
      'keeps everything across a restart',
      withStore(async (h: StoreHarness<Records>) => {
        const ws = randomUUID();
        const rec = await addJob(h.store, ws);
        await h.store.transition(rec.job.id, ['created'], 'validating');
        const again = await h.reopen();
        expect((await again.get(ws, rec.job.id))?.job.status).toBe('validating');
      }),
    );
  });
}
