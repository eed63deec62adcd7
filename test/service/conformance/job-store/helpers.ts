// What every role of the JobStore conformance suite opens per test, and how tests get a job to work on.
import { randomUUID } from 'node:crypto';
import { newJobRecord } from '../../../../service/domain/jobs.js';
import type { JobRecord, JobStore, UploadRecord, UploadStore } from '../../../../service/ports/jobs.js';

export interface StoreHarness<S = JobStore> {
  store: S;
  reopen(): Promise<S>;
  /** A second, independent handle on the same data (another process, in real life). */
  other(): Promise<S>;
  close(): Promise<void>;
}

/** What a test needs of the store to create a job: jobs exist only as claimed uploads. */
export type JobSource = Pick<UploadStore, 'createUpload' | 'createJobFromUpload'>;

export function upload(workspaceId: string): UploadRecord & { size: number } {
  const slug = `up_${randomUUID()}`;
  return {
    slug,
    workspaceId,
    userId: randomUUID(),
    fileName: 'scene.blend',
    fileType: 'blend',
    objectKey: `uploads/${workspaceId}/${slug}/scene.blend`,
    expiresAt: new Date(Date.now() + 1e6).toISOString(),
    createdAt: new Date().toISOString(),
    completedAt: null,
    size: 10,
    sha256: null,
    jobId: null,
  };
}

export async function addJob(store: JobSource, ws: string): Promise<JobRecord> {
  const u = upload(ws);
  await store.createUpload(u);
  const rec = newJobRecord(u, undefined);
  await store.createJobFromUpload(u.slug, rec);
  return rec;
}
