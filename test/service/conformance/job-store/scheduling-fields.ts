// JobRecords conformance, the field-level writes of a job's scheduling (extension scheduling):
// setSchedulingFields, and the render's move, which sets its request's fields in the same write as
// the status (transition's `scheduling`). Each sets only the fields given, over the scheduling as
// it is at the write, so writers of other fields, on this handle or another one, never undo each other.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { initialScheduling } from '../../../../service/domain/scheduling.js';
import type { JobRecords } from '../../../../service/ports/jobs.js';
import { withHarness } from '../with-harness.js';
import { addJob, type JobSource, type StoreHarness } from './helpers.js';

type Records = JobSource & JobRecords;

/** A job moved to `validated`, as the render route finds it. */
async function validatedJob(store: Records) {
  const rec = await addJob(store, randomUUID());
  await store.transition(rec.job.id, ['created'], 'validating');
  await store.transition(rec.job.id, ['validating'], 'validated');
  return rec.job.id;
}

export function schedulingFieldsConformance(open: () => Promise<StoreHarness<Records>>): void {
  describe('JobRecords: field-level scheduling writes', () => {
    const withStore = withHarness(open);

    it(
      'sets only the given fields, over the defaults when the job has no scheduling yet',
      withStore(async ({ store }: StoreHarness<Records>) => {
        const rec = await addJob(store, randomUUID());
        expect(rec.job.scheduling).toBeUndefined();
        const set = await store.setSchedulingFields(rec.job.id, { priority: 80, paused: undefined });
        expect(set?.job.scheduling).toEqual({ ...initialScheduling(undefined, []), priority: 80 });
        const paused = await store.setSchedulingFields(rec.job.id, { paused: true });
        expect(paused?.job.scheduling).toMatchObject({ priority: 80, paused: true });
        const dep = randomUUID();
        await store.setSchedulingFields(rec.job.id, { waitingFor: [dep] });
        expect((await store.getById(rec.job.id))?.job.scheduling).toMatchObject({
          priority: 80,
          paused: true,
          waitingFor: [dep],
        });
        expect((await store.getById(rec.job.id))?.job.status).toBe('created');
        expect(await store.setSchedulingFields(randomUUID(), { priority: 1 })).toBeUndefined();
      }),
    );

    it(
      'keeps every field of writers racing on two handles',
      withStore(async (h: StoreHarness<Records>) => {
        const other = await h.other();
        const rec = await addJob(h.store, randomUUID());
        const id = rec.job.id;
        const deps = [randomUUID(), randomUUID()];
        // Each writer owns one field; whichever order the writes land in, none is lost.
        await Promise.all([
          h.store.setSchedulingFields(id, { priority: 7 }),
          other.setSchedulingFields(id, { paused: true }),
          h.store.setSchedulingFields(id, { waitingFor: deps }),
          other.setSchedulingFields(id, { previewFrames: false }),
          h.store.setPreviewGate(id, ['none'], { gate: 'waiting', frames: [1, 5] }),
        ]);
        expect((await other.getById(id))?.job.scheduling).toMatchObject({
          priority: 7,
          paused: true,
          waitingFor: deps,
          previewFrames: false,
          previews: { gate: 'waiting', frames: [1, 5] },
        });
      }),
    );

    it(
      'moves a job and merges its scheduling fields in one write, keeping a pause written before',
      withStore(async (h: StoreHarness<Records>) => {
        const id = await validatedJob(h.store);
        const other = await h.other();
        await other.setSchedulingFields(id, { paused: true, priority: 90 });
        const dep = randomUUID();
        const { paused: _p, priority: _q, ...fields } = initialScheduling({ dependsOn: [dep] }, [dep]);
        const moved = await h.store.transition(id, ['validated'], 'booting', {}, {}, fields);
        expect(moved?.job.status).toBe('booting');
        expect(moved?.job.scheduling).toEqual({
          ...initialScheduling({ dependsOn: [dep] }, [dep]),
          paused: true,
          priority: 90,
        });
        expect((await other.getById(id))?.job.scheduling).toEqual(moved?.job.scheduling);
        // A status that does not match writes nothing, the scheduling fields neither.
        expect(await h.store.transition(id, ['validated'], 'booting', {}, {}, { priority: 1 })).toBeUndefined();
        expect((await h.store.getById(id))?.job.scheduling?.priority).toBe(90);
      }),
    );
  });
}
