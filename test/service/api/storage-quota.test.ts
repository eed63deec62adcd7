// Each workspace has a storage quota (issue 25): uploads, blobs and job outputs, counted from
// what the state database records (SQLite here, PostgreSQL on the scale stack). Past it, new
// upload targets, blob queries and commits answer 413 STORAGE_QUOTA_EXCEEDED saying what to do;
// another workspace is not affected.
import { describe, expect, it } from 'vitest';
import { BlobQueryResult } from '../../../shared/api/blob-upload.js';
import { commit, noise, putPart, queryBlobs, ref, sendMissing, sha256 } from '../../helpers/blob-flow.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';

const QUOTA = 64 * 1024;

const used = useTestService({ workspaceStorageQuotaBytes: QUOTA, rateLimitMax: 1_000_000 });
const { call } = used;

const refused = (r: { status: number; body: unknown; headers: Headers }) => [r.status, errorBody(r).name];

describe('workspace storage quota', () => {
  it(
    'lets blobs in up to the quota, then refuses queries, commits and upload targets with a message saying ' +
      'what to do',
    async () => {
      const files = [0, 1].map((i) => ({ path: `a/${i}.bin`, bytes: noise(`quota-${i}`, 20 * 1024) }));
      const q = await queryBlobs(
        call,
        files.map((f) => f.bytes),
      );
      await sendMissing(q.missing, new Map(files.map((f) => [sha256(f.bytes), f.bytes])));
      expect((await commit(call, files)).status).toBe(201);
      // 40 KiB held: 30 KiB more would pass the quota of 64 KiB.
      const more = await call('POST', '/uploads/blobs/query', { blobs: [ref(noise('quota-big', 30 * 1024))] });
      expect(refused(more)).toEqual([413, 'STORAGE_QUOTA_EXCEEDED']);
      expect(errorBody(more).metadata).toMatchObject({
        usedBytes: 40 * 1024,
        quotaBytes: QUOTA,
        addingBytes: 30 * 1024,
        usage: { blobs: 40 * 1024 },
      });
      expect(errorBody(more).message).toMatch(/ask the operator for a larger quota/);
      // What fits still goes in; held blobs cost nothing more.
      expect(
        (
          await call('POST', '/uploads/blobs/query', {
            blobs: [ref(noise('quota-small', 10 * 1024)), ...files.map((f) => ref(f.bytes))],
          })
        ).status,
      ).toBe(200);
      // A single-file upload fills the rest: from then on no new upload target, and no commit.
      await createJob(call, Buffer.alloc(30 * 1024, 1));
      const target = await call('POST', '/uploads', { fileName: 'next.blend', fileType: 'blend' });
      expect(refused(target)).toEqual([413, 'STORAGE_QUOTA_EXCEEDED']);
      expect(errorBody(target).metadata).toMatchObject({ usage: { uploads: 30 * 1024, blobs: 40 * 1024 } });
      expect(refused(await commit(call, files))).toEqual([413, 'STORAGE_QUOTA_EXCEEDED']);
    },
  );

  it("counts a job's published outputs (again for their zip) until retention deletes them", async () => {
    const own = api(used.svc.baseUrl, await used.svc.createApiKey('outputs'));
    const job = await createJob(own, Buffer.alloc(1000, 2));
    const usage = used.svc.service.ports.usage!;
    expect(await usage.usedBytes(job.workspaceId)).toEqual({ uploads: 1000, blobs: 0, outputs: 0, total: 1000 });
    const frames = [1, 2].map((n) => ({
      key: `k${n}`,
      fileName: `f_000${n}.png`,
      view: null,
      outputType: 'frame' as const,
      size: 2500,
    }));
    await used.svc.service.ports.jobs.update(
      job.id,
      {},
      { outputs: { frames, composites: [], framesZipKey: 'frames.zip', compositesZipKey: null, videos: [] } },
    );
    expect((await usage.usedBytes(job.workspaceId)).outputs).toBe(10_000);
    await used.svc.service.ports.jobs.update(job.id, {
      output: { isDeletedForClient: true, scheduledForDeletionAt: null },
    });
    expect((await usage.usedBytes(job.workspaceId)).outputs).toBe(0);
  });

  it('counts each workspace on its own', async () => {
    const other = api(used.svc.baseUrl, await used.svc.createApiKey('roomy'));
    const target = await other('POST', '/uploads', { fileName: 'a.blend', fileType: 'blend' });
    expect(target.status).toBe(201);
  });
});

describe('resuming near the quota', () => {
  const near = useTestService({
    workspaceStorageQuotaBytes: 200 * 1024,
    blobPartSizeBytes: 64 * 1024,
    rateLimitMax: 1_000_000,
  });

  it('does not count a blob whose parts are arriving twice: its upload resumes', async () => {
    const own = near.call;
    const held = noise('near-held', 60 * 1024);
    const q0 = await queryBlobs(own, [held]);
    await sendMissing(q0.missing, new Map([[sha256(held), held]]));
    // Half of a two-part blob of 100 KiB: the usage counts it whole from its first part on.
    const big = noise('near-big', 100 * 1024);
    const first = (await queryBlobs(own, [big])).missing[0]!.parts[0]!;
    expect((await putPart(first.uploadUrl, big.subarray(first.offset, first.offset + first.length))).status).toBe(200);
    expect((await near.svc.service.ports.usage!.usedBytes(near.svc.workspaceId)).total).toBe(160 * 1024);
    // 160 KiB used + 100 KiB missing passes 200 KiB, but those 100 KiB are the ones arriving.
    const again = await own('POST', '/uploads/blobs/query', { blobs: [ref(big)] });
    expect(again.status).toBe(200);
    expect(BlobQueryResult.parse(again.body).missing[0]!.parts.map((p) => p.uploaded)).toEqual([true, false]);
    // A new blob of the same size does not fit.
    expect(refused(await own('POST', '/uploads/blobs/query', { blobs: [ref(noise('near-new', 100 * 1024))] }))).toEqual(
      [413, 'STORAGE_QUOTA_EXCEEDED'],
    );
  });
});
