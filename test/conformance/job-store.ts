// One conformance suite for every JobStore adapter (SQLite now; PostgreSQL with the scale-out).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newJobRecord } from '../../service/domain/jobs.js';
import { emptyProgress } from '../../service/domain/progress.js';
import { UploadClaimError, type JobRecord, type JobStore, type UploadRecord } from '../../service/ports.js';
import { withHarness } from './with-harness.js';

export interface StoreHarness {
  store: JobStore;
  reopen(): Promise<JobStore>;
  /** A second, independent handle on the same data (another process, in real life). */
  other(): Promise<JobStore>;
  close(): Promise<void>;
}

function upload(workspaceId: string): UploadRecord & { size: number } {
  const slug = `up_${randomUUID()}`;
  return {
    slug, workspaceId, userId: randomUUID(), fileName: 'scene.blend', fileType: 'blend',
    objectKey: `uploads/${workspaceId}/${slug}/scene.blend`, expiresAt: new Date(Date.now() + 1e6).toISOString(),
    createdAt: new Date().toISOString(), completedAt: null, size: 10, sha256: null, jobId: null,
  };
}

async function addJob(store: JobStore, ws: string): Promise<JobRecord> {
  const u = upload(ws);
  await store.createUpload(u);
  const rec = newJobRecord(u, undefined);
  await store.createJobFromUpload(u.slug, rec);
  return rec;
}

export function jobStoreConformance(name: string, open: () => Promise<StoreHarness>): void {
  describe(`JobStore conformance: ${name}`, () => {
    const withStore = withHarness(open);

    it('creates a job from an upload once, and only in the upload\'s workspace', withStore(async ({ store }) => {
      const ws = randomUUID();
      const u = upload(ws);
      await store.createUpload(u);
      expect(await store.getUpload(randomUUID(), u.slug)).toBeUndefined();
      await store.completeUpload(u.slug, 10, 'abc');
      expect(await store.getUpload(ws, u.slug)).toMatchObject({ size: 10, sha256: 'abc', jobId: null });
      const rec = newJobRecord(u, undefined);
      await store.createJobFromUpload(u.slug, rec);
      await expect(store.createJobFromUpload(u.slug, newJobRecord(u, undefined))).rejects.toMatchObject({ reason: 'UPLOAD_ALREADY_USED' });
      await expect(store.createJobFromUpload('up_missing', newJobRecord(u, undefined))).rejects.toBeInstanceOf(UploadClaimError);
      expect((await store.getUpload(ws, u.slug))?.jobId).toBe(rec.job.id);
      expect((await store.get(ws, rec.job.id))?.job).toEqual(rec.job);
      expect(await store.get(randomUUID(), rec.job.id)).toBeUndefined();
      expect((await store.getById(rec.job.id))?.internal).toEqual(rec.internal);
    }));

    it('lists newest first with totals, pages and a status filter, per workspace', withStore(async ({ store }) => {
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
    }));

    it('serves the same jobs as stored JSON, with the preview key only while outputs exist', withStore(async ({ store }) => {
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
      expect((await store.listJson(ws, { page: 1, pageSize: 10, status: 'validating' })).items.map((i) => (JSON.parse(i.json) as { id: string }).id)).toEqual([ids[0]]);

      const one = await store.getJson(ws, ids[1]!);
      expect(JSON.parse(one!.json)).toEqual((await store.get(ws, ids[1]!))!.job);
      expect(await store.getJson(randomUUID(), ids[1]!)).toBeUndefined();
      await store.update(ids[1]!, { output: { isDeletedForClient: true, scheduledForDeletionAt: null } });
      expect((await store.getJson(ws, ids[1]!))?.previewKey).toBeNull();
    }));

    it('lists jobs whose outputs expired, oldest first, until they are marked deleted', withStore(async ({ store }) => {
      const ws = randomUUID();
      const [a, b, c] = [await addJob(store, ws), await addJob(store, ws), await addJob(store, ws)];
      const at = (offsetMs: number) => ({ isDeletedForClient: false, scheduledForDeletionAt: new Date(Date.now() + offsetMs).toISOString() });
      await store.update(a.job.id, { output: at(-1000) });
      await store.update(b.job.id, { output: at(-5000) });
      await store.update(c.job.id, { output: at(60_000) });
      expect((await store.listExpired(new Date(), 10)).map((r) => r.job.id)).toEqual([b.job.id, a.job.id]);
      expect(await store.listExpired(new Date(), 1)).toHaveLength(1);
      await store.update(b.job.id, { output: { ...at(-5000), isDeletedForClient: true } });
      expect((await store.listExpired(new Date(), 10)).map((r) => r.job.id)).toEqual([a.job.id]);
    }));

    it('moves a job only from an expected status, and lets one of racing writers win', withStore(async ({ store }) => {
      const rec = await addJob(store, randomUUID());
      expect(await store.transition(rec.job.id, ['validated'], 'booting')).toBeUndefined();
      const results = await Promise.all([1, 2, 3, 4, 5].map(() => store.transition(rec.job.id, ['created'], 'validating')));
      expect(results.filter(Boolean)).toHaveLength(1);
      const moved = await store.transition(rec.job.id, ['validating'], 'validated', { analysisId: rec.job.id }, { validationConfig: { sceneToRender: 'S' } });
      expect(moved?.job).toMatchObject({ status: 'validated', analysisId: rec.job.id });
      expect(moved?.internal.validationConfig).toEqual({ sceneToRender: 'S' });
      expect(moved!.job.updatedAt >= rec.job.updatedAt).toBe(true);
      expect(await store.transition(randomUUID(), ['created'], 'validating')).toBeUndefined();
      const updated = await store.update(rec.job.id, { normalizedSeconds: 12.5 });
      expect(updated?.job).toMatchObject({ status: 'validated', normalizedSeconds: 12.5, analysisId: rec.job.id });
    }));

    it('refuses a move the state machine forbids, whatever the job\'s status, and writes nothing', withStore(async ({ store }) => {
      const rec = await addJob(store, randomUUID());
      await expect(store.transition(rec.job.id, ['created'], 'completed')).rejects.toThrow(/cannot move from "created" to "completed"/);
      await expect(store.transition(rec.job.id, ['canceled'], 'rendering')).rejects.toThrow(/cannot move/);
      expect((await store.getById(rec.job.id))?.job.status).toBe('created');
    }));

    it('stores progress and lists it for jobs in the given states', withStore(async ({ store }) => {
      const ws = randomUUID();
      const a = await addJob(store, ws);
      const b = await addJob(store, ws);
      await store.transition(a.job.id, ['created'], 'validating');
      await store.transition(b.job.id, ['created'], 'validating');
      expect(await store.getProgress(a.job.id)).toBeUndefined();
      await store.setProgress({ ...emptyProgress(a.job.id, 'validating'), framesTotal: 3, framesDone: 1 });
      expect((await store.getProgress(a.job.id))?.framesDone).toBe(1);
      const list = await store.listProgress(ws, ['validating']);
      expect(list.map((p) => [p.jobId, p.framesDone])).toEqual([[b.job.id, null], [a.job.id, 1]]);
      expect(await store.listProgress(ws, ['rendering'])).toEqual([]);
      expect(await store.listProgress(randomUUID(), ['validating'])).toEqual([]);
    }));

    it('serves a job as it is now: its own writes at once, another process\'s within milliseconds', withStore(async ({ store, other }) => {
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
    }));

    it('keeps everything across a restart', withStore(async (h) => {
      const ws = randomUUID();
      const rec = await addJob(h.store, ws);
      await h.store.transition(rec.job.id, ['created'], 'validating');
      const again = await h.reopen();
      expect((await again.get(ws, rec.job.id))?.job.status).toBe('validating');
    }));
  });
}
