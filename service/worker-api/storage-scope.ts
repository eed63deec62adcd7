// Which objects a job opens to the worker that holds it: its own outputs, task logs and staged
// frames (read and write; a completed job's outputs read only); its upload, or its blob project document and its
// workspace's blobs (read only: the project the worker renders); and the outputs of the jobs it was requeued from
// (read only: frames a requeue copies). Nothing else, so a worker's token never reaches another
// job's or workspace's data through the storage routes.
import { ApiError } from '../http/api-error.js';
import type { JobRecord } from '../ports/jobs.js';
import { jobNotFound } from './scope.js';

export type Access = 'read' | 'write';

/** `key` is `folder` or lies under it (`a/b` holds `a/b/c`, never `a/bc`). */
function within(key: string, folder: string): boolean {
  return key === folder || key.startsWith(`${folder}/`);
}

/**
 * The job a key belongs to, read from its layout (outputs/W/J, logs/W/J, staging/J); undefined for
 * uploads, blobs, anything else.
 */
export function jobOfKey(key: string): string | undefined {
  const m = /^(?:outputs|logs)\/[^/]+\/([^/]+)/.exec(key) ?? /^staging\/([^/]+)/.exec(key);
  return m?.[1];
}

/** The workspace a key belongs to (outputs, logs, uploads, blobs: the second segment). */
function workspaceOfKey(key: string): string | undefined {
  return /^(?:outputs|logs|uploads|blobs)\/([^/]+)/.exec(key)?.[1];
}

/** Prefixes the job writes: published outputs (and kept frames), task logs, frames staged for other machines. */
export function ownPrefixes(rec: JobRecord): string[] {
  const { id, workspaceId } = rec.job;
  return [`outputs/${workspaceId}/${id}`, `logs/${workspaceId}/${id}`, `staging/${id}`];
}

/**
 * What `rec`'s worker may do with `key` (an object key, or a folder for list and delete-prefix).
 * `chain` are the jobs `rec` was requeued from, loaded only when asked for (most calls need none).
 * Throws 404 JOB_NOT_FOUND for a key of another job (OBJECT_NOT_FOUND: of another workspace), as if it did not exist,
 * and 403 STORAGE_KEY_NOT_IN_JOB for any other key outside the job's prefixes.
 */
export async function accessOf(rec: JobRecord, key: string, chain: () => Promise<JobRecord[]>): Promise<Access> {
  const folder = key.replace(/\/+$/, '');
  if (ownPrefixes(rec).some((p) => within(folder, p))) {
    // A completed job's outputs are published: no worker changes them after (only its logs and staging are cleaned up).
    return rec.job.status === 'completed' && within(folder, ownPrefixes(rec)[0]!) ? 'read' : 'write';
  }
  const { workspaceId } = rec.job;
  if (folder === rec.internal.sourceKey) return 'read';
  if (
    rec.internal.sourceFormat === 'blobs' &&
    within(folder, `blobs/${workspaceId}`) &&
    folder !== `blobs/${workspaceId}`
  )
    return 'read';
  const other = jobOfKey(folder);
  if (other !== undefined && other !== rec.job.id) {
    for (const c of await chain()) if (within(folder, `outputs/${c.job.workspaceId}/${c.job.id}`)) return 'read';
    throw jobNotFound(other);
  }
  const ws = workspaceOfKey(folder);
  if (ws !== undefined && ws !== workspaceId) {
    // Another workspace's data answers as missing, whether it exists or not.
    throw new ApiError('OBJECT_NOT_FOUND', {
      message: `No object "${key}" among the objects of the jobs this worker holds.`,
      metadata: { key },
    });
  }
  throw notInJob(rec.job.id, key);
}

export function notInJob(jobId: string, key: string, access?: Access): ApiError {
  return new ApiError('STORAGE_KEY_NOT_IN_JOB', {
    message: access
      ? `Job ${jobId} opens "${key}" for reading only (its upload, its workspace's blobs, a job it was ` +
        `requeued from, or its outputs once it completed): write only under its own outputs (before ` +
        `completion), logs and staging prefixes.`
      : `"${key}" is not among the objects of job ${jobId}: a worker reads and writes only its job's outputs, ` +
        `logs and staged frames, and reads its upload (or blobs) and the outputs of the jobs it was requeued ` +
        `from.`,
    metadata: { jobId, key },
  });
}
