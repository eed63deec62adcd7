// JobReadModel conformance: the pages and jobs the API serves. Jobs come from claimed uploads and
// change through JobRecords, whose writes the read model must reflect.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JobReadModel, JobRecords } from '../../../../service/ports/jobs.js';
import { withHarness } from '../with-harness.js';
import { addJob, type JobSource, type StoreHarness } from './helpers.js';

type Listed = JobSource & Pick<JobRecords, 'transition'> & JobReadModel;
/** Also compared with the record as JobRecords reads it, after an update of its outputs. */
type Compared = Listed & Pick<JobRecords, 'get' | 'update'>;

export function jobReadModelConformance(open: () => Promise<StoreHarness<Compared>>): void {
  describe('JobReadModel', () => {
    const withStore = withHarness(open);

    it(
      'lists newest first with totals, pages and a status filter, per workspace',
      withStore(async ({ store }: StoreHarness<Listed>) => {
        const ws = randomUUID();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await addJob(store, ws)).job.id);
        await addJob(store, randomUUID());
        await store.transition(ids[0]!, ['created'], 'validating');
        const page = await store.list(ws, { page: 2, pageSize: 2 });
        expect(page.total).toBe(5);
        expect(page.records.map((r) => r.job.id)).toEqual([ids[2], ids[1]]);
        const filtered = await store.list(ws, { page: 1, pageSize: 10, status: 'validating' });
        expect(filtered).toMatchObject({ total: 1 });
        expect(filtered.records[0]?.job.id).toBe(ids[0]);
      }),
    );

    it(
      'serves the same jobs as stored JSON, with the preview key only while outputs exist',
      withStore(async ({ store }: StoreHarness<Compared>) => {
        const ws = randomUUID();
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push((await addJob(store, ws)).job.id);
        await store.transition(ids[0]!, ['created'], 'validating');
        await store.update(ids[1]!, {}, { previewKey: 'outputs/x/preview.png' });

        const page = await store.listJson(ws, { page: 1, pageSize: 2 });
        const records = await store.list(ws, { page: 1, pageSize: 2 });
        expect(page.total).toBe(3);
        expect(page.items.map((i) => JSON.parse(i.json) as unknown)).toEqual(records.records.map((r) => r.job));
        expect(page.items.map((i) => i.previewKey)).toEqual([null, 'outputs/x/preview.png']);
        expect(
          (await store.listJson(ws, { page: 1, pageSize: 10, status: 'validating' })).items.map(
            (i) => (JSON.parse(i.json) as { id: string }).id,
          ),
        ).toEqual([ids[0]]);

        const one = await store.getJson(ws, ids[1]!);
        expect(JSON.parse(one!.json)).toEqual((await store.get(ws, ids[1]!))!.job);
        expect(await store.getJson(randomUUID(), ids[1]!)).toBeUndefined();
        await store.update(ids[1]!, { output: { isDeletedForClient: true, scheduledForDeletionAt: null } });
        expect((await store.getJson(ws, ids[1]!))?.previewKey).toBeNull();
      }),
    );

    it(
      "serves a job as it is now: its own writes at once, another process's within milliseconds",
      withStore(async ({ store, other }: StoreHarness<Listed>) => {
        const ws = randomUUID();
        const { job } = await addJob(store, ws);
        const status = async () => (JSON.parse((await store.getJson(ws, job.id))!.json) as { status: string }).status;
        expect(await status()).toBe('created');
        await store.transition(job.id, ['created'], 'validating');
        expect(await status()).toBe('validating');
        // Another workspace never gets it, cached or not.
        expect(await store.getJson(randomUUID(), job.id)).toBeUndefined();

        const elsewhere = await other();
        await elsewhere.transition(job.id, ['validating'], 'validated');
        // Stores may look for other processes' commits at most once a millisecond (SQLite does): a
        // read that starts once that much has passed must see the change, however busy the machine.
        // Waiting on that condition, not a fixed time, keeps the check exact.
        const changedAt = performance.now();
        while (performance.now() - changedAt < 2) await new Promise((r) => setImmediate(r));
        expect(await status(), 'the change made elsewhere was not seen').toBe('validated');
      }),
    );
  });
}
