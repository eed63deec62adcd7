import { randomUUID } from 'node:crypto';
import type { Job } from '../../shared/api/job.js';
import { TERMINAL_STATUSES } from '../../shared/job-status.js';
import type { UploadPreflight } from '../../shared/api/upload.js';
import type { JobRecord, StoredJobJson, UploadRecord } from '../ports/jobs.js';
import type { ObjectStorage } from '../ports/storage.js';

/** Where an upload's bytes live: one folder per workspace and slug. */
export function uploadKey(workspaceId: string, slug: string, fileName: string): string {
  return `uploads/${workspaceId}/${slug}/${fileName}`;
}

/** The slug of an upload key, or undefined for other objects. */
export function slugOfUploadKey(key: string): string | undefined {
  const m = /^uploads\/[^/]+\/([^/]+)\/[^/]+$/.exec(key);
  return m?.[1];
}

/** Upload file names become object key segments: keep letters, digits, `._- ` only. */
export function safeObjectName(fileName: string): string {
  const cleaned = fileName.replace(/[^A-Za-z0-9._ -]/g, '_').replace(/^[^A-Za-z0-9]+/, '');
  return cleaned.slice(-200) || 'upload';
}

/**
 * The fields every new job starts with (`created`, nothing analysed, rendered or billed yet), for
 * a job made from an upload and for one requeued from an ended job alike.
 */
export function createdJobFields(owner: { userId: string; workspaceId: string }, now: string, rootFolderId: string) {
  return {
    id: randomUUID(),
    status: 'created' as const,
    userId: owner.userId,
    workspaceId: owner.workspaceId,
    createdAt: now,
    updatedAt: now,
    analysisId: null,
    rootFolderId,
    normalizedSeconds: 0,
    failedReason: null,
    requestedConfig: {},
    finalConfig: null,
    output: { isDeletedForClient: false, scheduledForDeletionAt: null },
    isAnalysisSkipped: false,
    analysis: null,
  };
}

/** A fresh job record in `created` from a completed upload. */
export function newJobRecord(
  upload: UploadRecord & { size: number },
  preflight: UploadPreflight | undefined,
): JobRecord {
  const now = new Date().toISOString();
  const rootFolderId = randomUUID();
  return {
    job: {
      ...createdJobFields(upload, now, rootFolderId),
      projectId: null,
      uploadPreflight: preflight ?? null,
      sceneFile: {
        id: randomUUID(),
        name: upload.fileName,
        parentId: rootFolderId,
        rootFolderId,
        // A zip is the project folder's archive; the scene file inside it is chosen by validation.
        isSceneFile: upload.fileType === 'blend',
        isDeleted: false,
        isFolder: false,
        size: String(upload.size),
        createdAt: now,
        updatedAt: now,
        scheduledForDeletionAt: null,
      },
    },
    internal: {
      sourceKey: upload.objectKey,
      fileType: upload.fileType,
      ...(upload.sourceFormat === 'blobs' ? { sourceFormat: 'blobs' as const } : {}),
    },
  };
}

/** The preview object a client may be given a URL for: none once outputs are deleted. */
export function servedPreviewKey(rec: JobRecord): string | null {
  return rec.job.output?.isDeletedForClient ? null : (rec.internal.previewKey ?? null);
}

async function signPreview(key: string | null, storage: ObjectStorage, ttlSeconds: number): Promise<string | null> {
  if (!key) return null;
  return storage.presignGet(key, {
    expiresAt: new Date(Date.now() + ttlSeconds * 1000),
    fileName: key.split('/').pop()!,
  });
}

/** The client-facing job: stored fields plus a freshly signed preview URL. */
export async function presentJob(rec: JobRecord, storage: ObjectStorage, ttlSeconds: number): Promise<Job> {
  const job = rec.job.preemption && TERMINAL_STATUSES.has(rec.job.status) ? { ...rec.job, preemption: null } : rec.job;
  return { ...job, previewUrl: await signPreview(servedPreviewKey(rec), storage, ttlSeconds) };
}

/**
 * The stored job text without a stale preemption notice: a job that ended (canceled or failed
 * while a task of it was handed back) has no task waiting any more. Parsed only when a notice is
 * there, so the hot path stays a string append.
 */
function withoutStaleNotice(json: string): string {
  if (!json.includes('"preemption":{')) return json;
  const job = JSON.parse(json) as Pick<Job, 'status' | 'preemption'>;
  return TERMINAL_STATUSES.has(job.status) ? JSON.stringify({ ...job, preemption: null }) : json;
}

/**
 * presentJob on stored text: appends `previewUrl` to the stored JSON object, so serving a job
 * costs no JSON parse or stringify (the hot path of GET /jobs and GET /jobs/{id}).
 */
export async function presentJobJson(
  stored: StoredJobJson,
  storage: ObjectStorage,
  ttlSeconds: number,
): Promise<string> {
  const url = await signPreview(stored.previewKey, storage, ttlSeconds);
  const json = withoutStaleNotice(stored.json.trimEnd());
  if (!json.endsWith('}') || json === '{}') throw new Error('stored job JSON is not a non-empty object');
  return `${json.slice(0, -1)},"previewUrl":${url === null ? 'null' : JSON.stringify(url)}}`;
}
