// Where the content-addressed upload extension keeps things, and the document a committed
// project is: shared by the service (which stores blobs and commits projects) and the worker
// (which assembles a project from them). Pure.
import { z } from 'zod';
import { ProjectEntry, type BlobRef } from '../../shared/api/blob-upload.js';

/**
 * Object key of a verified blob. Per workspace: the same bytes sent by two workspaces are two
 * objects, so neither can learn from the other's uploads (no cross-workspace deduplication).
 */
export function blobKey(workspaceId: string, blob: BlobRef): string {
  return `blobs/${workspaceId}/${blob.sha256.slice(0, 2)}/${blob.sha256}-${blob.size}`;
}

/** Prefix of the parts of a blob sent in several parts, kept until the blob is assembled and verified. */
export function blobPartsPrefix(workspaceId: string, blob: BlobRef, partSize: number): string {
  return `blob-parts/${workspaceId}/${blob.sha256}-${blob.size}/${partSize}/`;
}

export function blobPartKey(workspaceId: string, blob: BlobRef, partSize: number, partNumber: number): string {
  return `${blobPartsPrefix(workspaceId, blob, partSize)}${String(partNumber).padStart(6, '0')}`;
}

/**
 * A committed project: stored as JSON at the upload's object key (uploadKey(ws, slug,
 * BLOB_PROJECT_OBJECT)) in place of a zip. The upload record's `sourceFormat` is `blobs`.
 */
export const BlobProject = z.object({
  version: z.literal(1),
  entries: z.array(ProjectEntry),
});
export type BlobProject = z.infer<typeof BlobProject>;

/** Name of the project document under the upload's folder. */
export const BLOB_PROJECT_OBJECT = 'project.blobs.json';

/** How an upload's (and so a job's) source is stored: one object (.zip or .blend), or a blob project. */
export type SourceFormat = 'object' | 'blobs';
