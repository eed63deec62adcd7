// The blob collector: deletes blobs no live upload or job references once they have not been
// used for the retention time (default 30 days), and the parts of multi-part uploads abandoned
// for as long. Like the retention sweeper it runs on one instance at a time (a named lease).
// Each blob is first marked in the index (from then on it is not held: a query asks for it again,
// a completed upload of it waits), then its object is deleted, then its row: a crash in between
// leaves a marked row the next sweep finishes, never a row without its object.
import type { Logger } from 'pino';
import { blobKey, blobPartsPrefix } from '../domain/blob-project.js';
import type { BlobCollection } from '../ports/blobs.js';
import type { LeaseStore } from '../ports/leases.js';
import type { ObjectStorage } from '../ports/storage.js';

export interface BlobCollectorOptions {
  /** How long an unreferenced blob is kept after its last use. Default 30 days (ServiceConfig.blobRetentionDays). */
  retentionMs?: number;
  /** Time between sweeps. Default 600000 ms (10 min). */
  intervalMs?: number;
  /** Blobs (and part uploads, and uploads' references) handled per step. Default 200. */
  batchSize?: number;
  /** Clock. Default Date.now. */
  now?: () => number;
}

export const BLOB_COLLECTION_LEASE = 'blob-collection';

export interface CollectorDeps {
  blobs: BlobCollection;
  storage: ObjectStorage;
  log: Logger;
  /** Several instances share one database: only the holder of this lease collects. */
  lease?: { store: LeaseStore; holder: string };
}

export class BlobCollector {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<{ blobs: number; parts: number }> | undefined;
  private readonly o: Required<BlobCollectorOptions>;

  constructor(
    private readonly deps: CollectorDeps,
    opts: BlobCollectorOptions = {},
  ) {
    this.o = {
      retentionMs: opts.retentionMs ?? 30 * 86_400_000,
      intervalMs: opts.intervalMs ?? 600_000,
      batchSize: opts.batchSize ?? 200,
      now: opts.now ?? Date.now,
    };
  }

  start(): void {
    const loop = () => {
      this.timer = setTimeout(() => void this.sweep().finally(loop), this.o.intervalMs);
      this.timer.unref();
    };
    void this.sweep().finally(loop);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
    const lease = this.deps.lease;
    await lease?.store.release(BLOB_COLLECTION_LEASE, lease.holder).catch(() => undefined);
  }

  /** One sweep; returns how many blobs and part uploads it deleted. Never runs twice at once. */
  sweep(): Promise<{ blobs: number; parts: number }> {
    this.running ??= this.sweepAll()
      .catch((err: unknown) => {
        this.deps.log.error({ err }, 'blob collection failed; the next sweep retries');
        return { blobs: 0, parts: 0 };
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepAll(): Promise<{ blobs: number; parts: number }> {
    const lease = this.deps.lease;
    // Held for two intervals: a holder that dies hands over by the next sweep but one.
    if (lease && !(await lease.store.acquire(BLOB_COLLECTION_LEASE, lease.holder, this.o.intervalMs * 2)))
      return { blobs: 0, parts: 0 };
    const now = new Date(this.o.now());
    const cutoff = now.getTime() - this.o.retentionMs;
    const { blobs, storage, log } = this.deps;
    let pruned = 0;
    for (let n = -1; n !== 0; pruned += n) n = await blobs.pruneReferences(now, this.o.batchSize);
    let deleted = 0;
    for (;;) {
      const batch = await blobs.claimCollectable(cutoff, now, this.o.batchSize);
      if (batch.length === 0) break;
      for (const b of batch) {
        // The object first: a crash before the row goes leaves the row marked, and the next sweep deletes again.
        await storage.delete(blobKey(b.workspaceId, b));
        await blobs.collected(b);
        deleted++;
      }
    }
    let parts = 0;
    for (;;) {
      const stale = await blobs.staleParts(cutoff, this.o.batchSize);
      if (stale.length === 0) break;
      for (const p of stale) {
        await storage.deletePrefix(blobPartsPrefix(p.workspaceId, p, p.partSize));
        await blobs.partsCollected(p);
        parts++;
      }
    }
    if (deleted + parts + pruned > 0) {
      log.info(
        { blobs: deleted, partUploads: parts, references: pruned, unusedSince: new Date(cutoff).toISOString() },
        'blobs collected: retention period over',
      );
    }
    return { blobs: deleted, parts };
  }
}
