// Requeues (job-requeue extension): the link from an ended job to the new job made from it. The
// requeue route and GET /jobs/{id}/lineage declare what they need here; the SQL job stores implement it.
import type { JobRecord } from './jobs.js';

export interface RequeueLinkRecord {
  sourceJobId: string;
  jobId: string;
  /**
   * The frames asked to render again, canonical (`formatFrameRanges` joined by commas); '' for
   * every frame the old job lacked.
   */
  selection: string;
  createdAt: string;
}

export interface RequeueStore {
  /**
   * Stores `rec` (a new job) as the requeue of `link.sourceJobId` for `link.selection`, and the
   * link, in one transaction. When that requeue exists already (an earlier or concurrent
   * identical request), stores nothing and answers the existing job's id with `created: false`.
   * `uploadSlug`: the upload whose stored project the new job renders (keeps its blobs alive).
   */
  createRequeue(
    link: { sourceJobId: string; selection: string; uploadSlug: string | null },
    rec: JobRecord,
  ): Promise<{ jobId: string; created: boolean }>;
  /** The requeue that made `jobId` (undefined for an uploaded job) and those made from it, oldest first. */
  requeueLinks(jobId: string): Promise<{ from: RequeueLinkRecord | undefined; to: RequeueLinkRecord[] }>;
}
