// Pure mapping between stored rows and port records, shared by the SQLite and PostgreSQL adapters.
import type { Selectable } from 'kysely';
import type { JobStatus } from '../../../shared/job-status.js';
import type { ApiKeyRecord } from '../../ports/keys.js';
import type { JobInternal, JobPatch, JobRecord, StoredJobJson, UploadRecord } from '../../ports/jobs.js';
import type { DeliveryState, WebhookDelivery, WebhookEvent } from '../../webhooks/ports.js';
import { servedPreviewKey } from '../../domain/jobs.js';
import type { DB } from './schema.js';

type JobRow = DB['jobs'];

export function toRecord(row: Pick<JobRow, 'doc' | 'internal'>): JobRecord {
  return { job: JSON.parse(row.doc) as JobRecord['job'], internal: JSON.parse(row.internal) as JobInternal };
}

export const toJson = (r: { doc: string; preview_key: string | null }): StoredJobJson => ({
  json: r.doc,
  previewKey: r.preview_key,
});

export function toUpload(r: DB['uploads']): UploadRecord {
  return {
    slug: r.slug,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    fileName: r.file_name,
    fileType: r.file_type as UploadRecord['fileType'],
    objectKey: r.object_key,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    completedAt: r.completed_at,
    size: r.size,
    sha256: r.sha256,
    jobId: r.job_id,
    ...(r.source_format === 'blobs' ? { sourceFormat: 'blobs' as const } : {}),
  };
}

export function uploadRow(u: UploadRecord): DB['uploads'] {
  return {
    slug: u.slug,
    workspace_id: u.workspaceId,
    user_id: u.userId,
    file_name: u.fileName,
    file_type: u.fileType,
    object_key: u.objectKey,
    expires_at: u.expiresAt,
    created_at: u.createdAt,
    completed_at: u.completedAt,
    size: u.size,
    sha256: u.sha256,
    job_id: u.jobId,
    source_format: u.sourceFormat === 'blobs' ? 'blobs' : null,
  };
}

/**
 * When the job's outputs (or the frames a stopped job kept for a requeue) expire, while they
 * exist (ISO strings sort by time).
 */
function deleteAfter(rec: JobRecord): string | null {
  const o = rec.job.output;
  return o && !o.isDeletedForClient ? (o.scheduledForDeletionAt ?? rec.internal.keptUntil ?? null) : null;
}

/**
 * Bytes of a job's published outputs while they exist: frames and composites, again for each zip
 * of them (stored, not recompressed). Videos are not counted (their size is not recorded; they are
 * small beside the frames). Kept frames of a failed job are not published outputs.
 */
export function outputBytes(rec: JobRecord): number {
  const o = rec.internal.outputs;
  if (!o || rec.job.output?.isDeletedForClient) return 0;
  const sum = (files: readonly { size: number }[]) =>
    files.reduce((n, f) => n + (Number.isFinite(f.size) ? f.size : 0), 0);
  const frames = sum(o.frames);
  const composites = sum(o.composites);
  return frames * (o.framesZipKey ? 2 : 1) + composites * (o.compositesZipKey ? 2 : 1);
}

/** The columns a job write sets: the record as JSON text plus the columns derived from it. */
export function jobColumns(
  rec: JobRecord,
): Pick<JobRow, 'status' | 'updated_at' | 'doc' | 'internal' | 'preview_key' | 'delete_after' | 'output_bytes'> {
  return {
    status: rec.job.status,
    updated_at: rec.job.updatedAt,
    doc: JSON.stringify(rec.job),
    internal: JSON.stringify(rec.internal),
    preview_key: servedPreviewKey(rec),
    delete_after: deleteAfter(rec),
    output_bytes: outputBytes(rec),
  };
}

/** What a transition or update decides to write; undefined leaves the job alone. */
export type JobChange = { status: JobStatus; patch: JobPatch; internal: Partial<JobInternal> } | undefined;

/** The record after `change`, stamped with a fresh updatedAt. */
export function applyChange(rec: JobRecord, change: NonNullable<JobChange>): JobRecord {
  return {
    job: { ...rec.job, ...change.patch, status: change.status, updatedAt: new Date().toISOString() },
    internal: { ...rec.internal, ...change.internal },
  };
}

export interface KeyRow {
  id: string;
  workspace_id: string;
  workspace_name: string;
  user_id: string;
  label: string;
  display_prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export function toKey(r: KeyRow): ApiKeyRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    workspaceName: r.workspace_name,
    userId: r.user_id,
    label: r.label,
    displayPrefix: r.display_prefix,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

export function toDelivery(r: Selectable<DB['webhook_deliveries']>): WebhookDelivery {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    jobId: r.job_id,
    event: JSON.parse(r.payload) as WebhookEvent,
    state: r.state as DeliveryState,
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastStatus: r.last_status,
    lastError: r.last_error,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
  };
}
