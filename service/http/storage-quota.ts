// The storage quota of a workspace (uploads, blobs, job outputs), checked where new bytes are let
// in: POST /uploads, POST /uploads/blobs/query (with the bytes it would sign for) and
// POST /uploads/commit. A render is never stopped by it: outputs of running jobs may take a
// workspace past its quota, and then its next upload is refused. Usage is read from the state
// database (four indexed sums per check); `cacheMs` can reuse it across a burst of requests.
import type { BlobRef } from '../../shared/api/blob-upload.js';
import type { StorageUsage } from '../ports/usage.js';
import { ApiError } from './api-error.js';

export interface StorageQuotaOptions {
  usage: StorageUsage;
  /** Bytes one workspace may keep. */
  quotaBytes: number;
  /** How long a workspace's usage is reused, ms. Default 0: read at every check, exact. */
  cacheMs?: number;
  now?: () => number;
}

const GIB = 2 ** 30;
const gib = (n: number) => `${(n / GIB).toFixed(n < 10 * GIB ? 2 : 0)} GiB`;

export class StorageQuota {
  private readonly cache = new Map<string, { at: number; used: Awaited<ReturnType<StorageUsage['usedBytes']>> }>();

  constructor(private readonly o: StorageQuotaOptions) {}

  /**
   * Throws STORAGE_QUOTA_EXCEEDED when the workspace's usage plus `addingBytes` is over its quota.
   * `blobs` are what a query would add: those already arriving in parts (counted in the usage) are
   * taken off, so resuming an upload near the quota is not refused for counting them twice.
   */
  async check(workspaceId: string, addingBytes = 0, blobs?: readonly BlobRef[]): Promise<void> {
    const now = (this.o.now ?? Date.now)();
    let hit = this.cache.get(workspaceId);
    if (!hit || now - hit.at >= (this.o.cacheMs ?? 0)) {
      hit = { at: now, used: await this.o.usage.usedBytes(workspaceId) };
      this.cache.set(workspaceId, hit);
      // Bounded: old entries go once the map holds many workspaces.
      if (this.cache.size > 10_000) this.cache.delete(this.cache.keys().next().value!);
    }
    const { used } = hit;
    const quota = this.o.quotaBytes;
    // Full already: refused even when adding nothing (POST /uploads does not know its size yet).
    const fits = (adding: number) => used.total + adding <= quota && !(adding === 0 && used.total >= quota);
    if (fits(addingBytes)) return;
    if (blobs?.length && addingBytes > 0) {
      addingBytes = Math.max(0, addingBytes - (await this.o.usage.partsInProgressBytes(workspaceId, blobs)));
      if (used.total + addingBytes <= quota) return;
    }
    throw new ApiError('STORAGE_QUOTA_EXCEEDED', {
      message:
        `Your workspace keeps ${gib(used.total)} (uploads ${gib(used.uploads)}, blobs ${gib(used.blobs)}, job ` +
        `outputs ${gib(used.outputs)})${addingBytes ? ` and this would add ${gib(addingBytes)}` : ''}, over ` +
        `its storage quota of ${gib(quota)}: wait until older outputs pass their retention, send a smaller ` +
        `project, or ask the operator for a larger quota (--workspace-storage-quota).`,
      metadata: {
        usedBytes: used.total,
        quotaBytes: quota,
        addingBytes,
        usage: { uploads: used.uploads, blobs: used.blobs, outputs: used.outputs },
      },
    });
  }

  /** Forgets a workspace's cached usage (after it stored new bytes). */
  forget(workspaceId: string): void {
    this.cache.delete(workspaceId);
  }
}
