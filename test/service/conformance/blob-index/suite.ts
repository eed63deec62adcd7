// One conformance suite for every BlobStore adapter (SQLite, PostgreSQL), by role: the index the
// routes use, the commit, and the collector. Times are passed in, so days pass in a test at once.
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BlobRef } from '../../../../shared/api/blob-upload.js';
import { BLOB_PROJECT_OBJECT } from '../../../../service/domain/blob-project.js';
import { newJobRecord, uploadKey } from '../../../../service/domain/jobs.js';
import type { BlobStore } from '../../../../service/ports/blobs.js';
import type { JobStore, UploadRecord } from '../../../../service/ports/jobs.js';
import type { RequeueStore } from '../../../../service/ports/requeues.js';
import { newRequeuedRecord } from '../../../../service/domain/requeue.js';
import { withHarness } from '../with-harness.js';

export interface BlobHarness {
  blobs: BlobStore;
  /** The job store on the same database: uploads and jobs are what keep blobs alive. */
  jobs: JobStore & RequeueStore;
  /** Another, independent handle on the same database (another service instance). */
  other(): Promise<{ blobs: BlobStore; secret: Buffer }>;
  /** This handle's blob URL-signing secret. */
  secret: Buffer;
  close(): Promise<void>;
}

const DAY = 86_400_000;
const T0 = Date.parse('2030-01-01T00:00:00.000Z');

export function blob(seed: string, size = 100): BlobRef {
  return { sha256: createHash('sha256').update(seed).digest('hex'), size };
}

const key = (b: BlobRef) => `${b.sha256}-${b.size}`;
const keys = (bs: readonly BlobRef[]) => bs.map(key).sort();

/** A committed blob upload as the commit route builds it, expiring `ttlMs` after `nowMs`. */
export function committedUpload(workspaceId: string, nowMs: number, ttlMs = 6 * 3600_000): UploadRecord {
  const slug = `up_${randomUUID()}`;
  return {
    slug,
    workspaceId,
    userId: 'u',
    fileName: 'project.zip',
    fileType: 'zip',
    objectKey: uploadKey(workspaceId, slug, BLOB_PROJECT_OBJECT),
    expiresAt: new Date(nowMs + ttlMs).toISOString(),
    createdAt: new Date(nowMs).toISOString(),
    completedAt: new Date(nowMs).toISOString(),
    size: 300,
    sha256: null,
    jobId: null,
    sourceFormat: 'blobs',
  };
}

export function blobStoreConformance(name: string, open: () => Promise<BlobHarness>): void {
  describe(`BlobStore conformance: ${name}`, () => {
    const withStore = withHarness(open);

    describe('BlobIndex', () => {
      it(
        'answers as held only blobs recorded in that workspace, and touches them',
        withStore(async ({ blobs }) => {
          const [ws, rival] = [randomUUID(), randomUUID()];
          const [a, b, c] = [blob('a'), blob('b'), blob('c', 7)];
          expect(await blobs.record(ws, a, T0)).toBe(true);
          expect(await blobs.record(ws, b, T0)).toBe(true);
          expect(await blobs.record(rival, c, T0)).toBe(true);
          // Recording again touches; the same bytes with another size are another blob.
          expect(await blobs.record(ws, a, T0)).toBe(true);
          expect(keys(await blobs.touchHeld(ws, [a, b, c, blob('a', 101), a], T0 + 5 * DAY))).toEqual(keys([a, b]));
          expect(keys(await blobs.touchHeld(rival, [a, b, c], T0))).toEqual(keys([c]));
          expect(await blobs.touchHeld(ws, [], T0)).toEqual([]);
          // The touch moved a and b past a cutoff between T0 and T0 + 5 days; c was touched at T0.
          const taken = await blobs.claimCollectable(T0 + DAY, new Date(T0 + 40 * DAY), 100);
          expect(taken).toEqual([{ workspaceId: rival, ...c }]);
        }),
      );

      it(
        'touches 20,000 blobs in one call, answering only the held ones',
        withStore(async ({ blobs }) => {
          const ws = randomUUID();
          const all = Array.from({ length: 20_000 }, (_, i) => blob(`many-${i}`, i));
          const held = all.filter((_, i) => i % 3 === 0);
          for (const b of held) await blobs.record(ws, b, T0);
          const got = await blobs.touchHeld(ws, all, T0 + 1);
          expect(keys(got)).toEqual(keys(held));
        }),
        60_000,
      );

      it(
        'forgets a row that has no object, and tracks multi-part uploads',
        withStore(async ({ blobs }) => {
          const ws = randomUUID();
          const a = blob('a', 20_000_000);
          await blobs.record(ws, a, T0);
          await blobs.forget(ws, a);
          expect(await blobs.touchHeld(ws, [a], T0)).toEqual([]);
          await blobs.noteParts(ws, a, 8 << 20, T0);
          await blobs.noteParts(ws, a, 8 << 20, T0 + DAY);
          await blobs.noteParts(ws, blob('b', 9 << 20), 8 << 20, T0 + 10 * DAY);
          expect(await blobs.staleParts(T0 + 2 * DAY, 10)).toEqual([
            { workspaceId: ws, ...a, partSize: 8 << 20, updatedAt: T0 + DAY },
          ]);
          await blobs.partsDone(ws, a, 8 << 20);
          expect(await blobs.staleParts(T0 + 2 * DAY, 10)).toEqual([]);
        }),
      );
    });

    describe('BlobReferences', () => {
      it(
        'commits the upload with its references in one step; a second commit of the slug changes nothing',
        withStore(async ({ blobs, jobs }) => {
          const ws = randomUUID();
          const [a, b] = [blob('a'), blob('b')];
          const up = committedUpload(ws, T0, 10 * DAY);
          await blobs.commitUpload(up, [a, b, a]);
          expect(await jobs.getUpload(ws, up.slug)).toEqual(up);
          expect(await jobs.getUpload(randomUUID(), up.slug)).toBeUndefined();
          await expect(blobs.commitUpload({ ...up, fileName: 'other.zip' }, [blob('c')])).rejects.toThrow();
          expect((await jobs.getUpload(ws, up.slug))?.fileName).toBe('project.zip');
          // c was not referenced by the refused commit: it is collectable, a and b are not.
          for (const x of [a, b, blob('c')]) await blobs.record(ws, x, T0);
          const taken = await blobs.claimCollectable(T0 + DAY, new Date(T0 + 2 * DAY), 100);
          expect(keys(taken)).toEqual(keys([blob('c')]));
        }),
      );
    });

    describe('BlobCollection', () => {
      it(
        'keeps blobs of a live upload or job, and takes them once the upload expired or the job ended',
        withStore(async ({ blobs, jobs }) => {
          const ws = randomUUID();
          const [a, b, loose] = [blob('a'), blob('b'), blob('loose')];
          for (const x of [a, b, loose]) await blobs.record(ws, x, T0);
          const unused = committedUpload(ws, T0, 10 * DAY);
          await blobs.commitUpload(unused, [a]);
          const used = committedUpload(ws, T0);
          await blobs.commitUpload(used, [b]);
          const rec = newJobRecord({ ...used, size: 300 }, undefined);
          await jobs.createJobFromUpload(used.slug, rec);
          expect(rec.internal.sourceFormat).toBe('blobs');
          const cutoff = T0 + DAY;
          // Day 5: the unused upload is live, the job (created) is live, `loose` is referenced by nothing.
          expect(keys(await blobs.claimCollectable(cutoff, new Date(T0 + 5 * DAY), 100))).toEqual(keys([loose]));
          // A blob being collected is not held, cannot be recorded again, and is answered again until collected.
          expect(await blobs.touchHeld(ws, [loose], T0 + 5 * DAY)).toEqual([]);
          expect(await blobs.record(ws, loose, T0 + 5 * DAY)).toBe(false);
          expect(keys(await blobs.claimCollectable(cutoff, new Date(T0 + 5 * DAY), 100))).toEqual(keys([loose]));
          await blobs.collected({ workspaceId: ws, ...loose });
          expect(await blobs.claimCollectable(cutoff, new Date(T0 + 5 * DAY), 100)).toEqual([]);
          expect(await blobs.record(ws, loose, T0 + 5 * DAY)).toBe(true);
          // Day 11: the unused upload expired; the job still runs.
          for (const status of ['validating', 'validated', 'booting', 'rendering'] as const) {
            const from = (await jobs.getById(rec.job.id))!.job.status;
            await jobs.transition(rec.job.id, [from], status);
            expect(keys(await blobs.claimCollectable(cutoff, new Date(T0 + 11 * DAY), 100)), status).toEqual(keys([a]));
          }
          await blobs.collected({ workspaceId: ws, ...a });
          await jobs.transition(rec.job.id, ['rendering'], 'completed');
          expect(keys(await blobs.claimCollectable(cutoff, new Date(T0 + 11 * DAY), 100))).toEqual(keys([b]));
        }),
      );

      it(
        "keeps the blobs of an ended job's upload while a job requeued from it is unfinished",
        withStore(async ({ blobs, jobs }) => {
          const ws = randomUUID();
          const a = blob('requeued');
          await blobs.record(ws, a, T0);
          const up = committedUpload(ws, T0);
          await blobs.commitUpload(up, [a]);
          const rec = newJobRecord({ ...up, size: 300 }, undefined);
          await jobs.createJobFromUpload(up.slug, rec);
          await jobs.transition(rec.job.id, ['created'], 'failed');
          const again = newRequeuedRecord(rec, null);
          await jobs.createRequeue({ sourceJobId: rec.job.id, selection: '', uploadSlug: up.slug }, again);
          const at = new Date(T0 + 5 * DAY);
          expect(await blobs.pruneReferences(at, 100)).toBe(0);
          expect(await blobs.claimCollectable(T0 + DAY, at, 100)).toEqual([]);
          await jobs.transition(again.job.id, ['created'], 'canceled');
          expect(await blobs.pruneReferences(at, 100)).toBe(1);
          expect(keys(await blobs.claimCollectable(T0 + DAY, at, 100))).toEqual(keys([a]));
        }),
      );

      it(
        'prunes references of expired uploads and finished jobs only',
        withStore(async ({ blobs, jobs }) => {
          const ws = randomUUID();
          const live = committedUpload(ws, T0, 10 * DAY);
          await blobs.commitUpload(live, [blob('a'), blob('b')]);
          const expired = committedUpload(ws, T0, DAY);
          await blobs.commitUpload(expired, [blob('c'), blob('d'), blob('e')]);
          const done = committedUpload(ws, T0, DAY);
          await blobs.commitUpload(done, [blob('f')]);
          const rec = newJobRecord({ ...done, size: 1 }, undefined);
          await jobs.createJobFromUpload(done.slug, rec);
          expect(await blobs.pruneReferences(new Date(T0 + 2 * DAY), 100)).toBe(3);
          await jobs.transition(rec.job.id, ['created'], 'canceled');
          expect(await blobs.pruneReferences(new Date(T0 + 2 * DAY), 100)).toBe(1);
          expect(await blobs.pruneReferences(new Date(T0 + 2 * DAY), 100)).toBe(0);
          for (const x of ['a', 'b', 'c', 'f']) await blobs.record(ws, blob(x), T0);
          expect(keys(await blobs.claimCollectable(T0 + DAY, new Date(T0 + 2 * DAY), 100))).toEqual(
            keys([blob('c'), blob('f')]),
          );
        }),
      );

      it(
        'never answers a blob as held to one instance while another takes it for collection',
        withStore(async ({ blobs, other }) => {
          const ws = randomUUID();
          const all = Array.from({ length: 300 }, (_, i) => blob(`race-${i}`));
          for (const b of all) await blobs.record(ws, b, T0);
          const second = (await other()).blobs;
          // Two clients touch overlapping halves while the collector (on its own clock, days later) claims.
          const [held1, held2, taken] = await Promise.all([
            blobs.touchHeld(ws, all.slice(0, 200).reverse(), T0 + 10 * DAY),
            second.touchHeld(ws, all.slice(100), T0 + 10 * DAY),
            second.claimCollectable(T0 + DAY, new Date(T0 + 10 * DAY), 1000),
          ]);
          const heldKeys = new Set([...held1, ...held2].map(key));
          expect(taken.filter((t) => heldKeys.has(key(t)))).toEqual([]);
          // Every blob ended up on exactly one side.
          expect(heldKeys.size + taken.length).toBe(all.length);
        }),
      );

      it(
        'shares the blob URL-signing secret between instances',
        withStore(async ({ secret, other }) => {
          expect(secret.length).toBe(32);
          expect((await other()).secret.equals(secret)).toBe(true);
        }),
      );
    });
  });
}
