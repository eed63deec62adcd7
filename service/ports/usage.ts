// What a workspace keeps stored, for its storage quota (ServiceConfig.workspaceStorageQuotaBytes).
import type { BlobRef } from '../../shared/api/blob-upload.js';

export interface StorageUsage {
  /**
   * Bytes the workspace keeps stored now: completed single-file uploads (never deleted), blobs
   * held or being uploaded in parts, and the published outputs of jobs not yet deleted by retention.
   */
  usedBytes(workspaceId: string): Promise<{ uploads: number; blobs: number; outputs: number; total: number }>;
  /**
   * Bytes of those of `blobs` whose parts are arriving (counted whole in usedBytes): a query that
   * resumes them adds nothing new, so the quota check takes them off what it would add.
   */
  partsInProgressBytes(workspaceId: string, blobs: readonly BlobRef[]): Promise<number>;
}
