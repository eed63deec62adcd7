// Blob collection against the real service and storage (files, or s3rver on the scale stack):
// a collector on a clock the test moves (days pass at once) deletes the blobs nothing live
// references once unused for the retention time, and never one a queued or running job needs.
import { buffer } from 'node:stream/consumers';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { Job } from '../../../shared/api/job.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { BlobCollector } from '../../../service/blobs/collector.js';
import { blobKey, blobPartsPrefix } from '../../../service/domain/blob-project.js';
import { noise, putPart, queryBlobs, ref, uploadProject } from '../../helpers/blob-flow.js';
import { errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';

const PART = 64 * 1024;
const DAY = 86_400_000;
let now = Date.now();
let collector: BlobCollector;

const used = useTestService({ blobPartSizeBytes: PART });
const { call } = used;
beforeAll(async () => {
  // The service's own collector, on a clock this test moves; it sweeps only when told.
  collector = new BlobCollector(
    {
      blobs: used.svc.service.ports.blobs!.store,
      storage: used.svc.service.ports.storage,
      log: pino({ level: 'silent' }),
    },
    { retentionMs: 30 * DAY, now: () => now },
  );
});

const isStored = async (bytes: Buffer) =>
  (await used.svc.service.ports.storage.stat(blobKey(used.svc.workspaceId, ref(bytes)))) !== undefined;

async function jobFrom(files: { path: string; bytes: Buffer }[], statuses: JobStatus[] = []): Promise<Job> {
  const committed = await uploadProject(call, files);
  const r = await call('POST', '/jobs', { slug: committed.slug });
  const job = Job.parse(r.body);
  let from: JobStatus = 'created';
  for (const to of statuses) {
    expect(await used.svc.service.ports.jobs.transition(job.id, [from], to)).toBeDefined();
    from = to;
  }
  return job;
}

describe('blob collection', () => {
  it(
    'never collects a blob a queued or rendering job needs, and collects unreferenced ones after the retention ' +
      'time',
    async () => {
      const [queued, rendering, shared, finished, committedOnly, loose] = [
        'queued',
        'rendering',
        'shared',
        'finished',
        'committed',
        'loose',
      ].map((s) => noise(s, 3000)) as [Buffer, Buffer, Buffer, Buffer, Buffer, Buffer];
      const partial = noise('partial', 3 * PART);
      const queuedJob = await jobFrom([{ path: 'a.png', bytes: queued }]);
      const renderingJob = await jobFrom(
        [
          { path: 'b.png', bytes: rendering },
          { path: 'shared.png', bytes: shared },
        ],
        ['validating', 'validated', 'booting', 'rendering'],
      );
      await jobFrom(
        [
          { path: 'f.png', bytes: finished },
          { path: 'shared.png', bytes: shared },
        ],
        ['validating', 'failed'],
      );
      await uploadProject(call, [{ path: 'c.png', bytes: committedOnly }]);
      const looseUrl = (await queryBlobs(call, [loose])).missing[0]!.parts[0]!.uploadUrl;
      expect((await putPart(looseUrl, loose)).body.blobComplete).toBe(true);
      const partialPart = (await queryBlobs(call, [partial])).missing[0]!.parts[0]!;
      expect((await putPart(partialPart.uploadUrl, partial.subarray(0, PART))).status).toBe(200);
      const partsPrefix = blobPartsPrefix(used.svc.workspaceId, ref(partial), PART);
      expect(await used.svc.service.ports.storage.list(partsPrefix)).toHaveLength(1);

      // Within the retention time nothing goes.
      expect(await collector.sweep()).toEqual({ blobs: 0, parts: 0 });

      now += 31 * DAY;
      expect(await collector.sweep()).toEqual({ blobs: 3, parts: 1 });
      // The jobs' blobs are all there, bytes intact, and still held.
      for (const b of [queued, rendering, shared]) {
        expect(await isStored(b)).toBe(true);
        expect(
          (await buffer(await used.svc.service.ports.storage.get(blobKey(used.svc.workspaceId, ref(b))))).equals(b),
        ).toBe(true);
      }
      expect((await queryBlobs(call, [queued, rendering, shared])).missing).toEqual([]);
      // The finished job's own blob, the expired commit's and the loose one are gone, and asked for again.
      for (const b of [finished, committedOnly, loose]) expect(await isStored(b)).toBe(false);
      expect((await queryBlobs(call, [finished, committedOnly, loose])).missing).toHaveLength(3);
      expect(await used.svc.service.ports.storage.list(partsPrefix)).toEqual([]);
      expect((await queryBlobs(call, [partial])).missing[0]!.parts.map((p) => p.uploaded)).toEqual([
        false,
        false,
        false,
      ]);

      // Once the jobs end, their blobs follow.
      await used.svc.service.ports.jobs.transition(renderingJob.id, ['rendering'], 'completed');
      await used.svc.service.ports.jobs.transition(queuedJob.id, ['created'], 'canceled');
      expect(await collector.sweep()).toEqual({ blobs: 3, parts: 0 });
      for (const b of [queued, rendering, shared]) expect(await isStored(b)).toBe(false);

      // A collected blob is simply sent again.
      const again = (await queryBlobs(call, [loose])).missing[0]!.parts[0]!.uploadUrl;
      expect((await putPart(again, loose)).body.blobComplete).toBe(true);
      expect(await isStored(loose)).toBe(true);
    },
  );

  it('answers 503 to a part completing a blob the collector is deleting, and takes it once it is deleted', async () => {
    const bytes = noise('contested', 2000);
    const url = (await queryBlobs(call, [bytes])).missing[0]!.parts[0]!.uploadUrl;
    expect((await putPart(url, bytes)).body.blobComplete).toBe(true);
    // The collector has marked it (its sweep stopped before deleting): it is no longer held...
    now += 31 * DAY;
    const store = used.svc.service.ports.blobs!.store;
    expect((await store.claimCollectable(now - 30 * DAY, new Date(now), 100)).map((b) => b.sha256)).toContain(
      ref(bytes).sha256,
    );
    expect((await queryBlobs(call, [bytes])).missing).toHaveLength(1);
    // ...and a client sending it again is told to come back, not that it is stored.
    const busy = await putPart(url, bytes);
    expect([busy.status, errorBody(busy).name, busy.headers.get('retry-after')]).toEqual([
      503,
      'SERVICE_UNAVAILABLE',
      '5',
    ]);
    expect((await collector.sweep()).blobs).toBeGreaterThanOrEqual(1);
    expect(await isStored(bytes)).toBe(false);
    expect((await putPart(url, bytes)).body.blobComplete).toBe(true);
    expect(await isStored(bytes)).toBe(true);
    expect((await queryBlobs(call, [bytes])).missing).toEqual([]);
  });
});
