// The blob index of the content-addressed upload extension, split by who uses it: the routes
// (which blobs a workspace holds, recording new ones), the commit (which uploads reference which
// blobs) and the collector (what may be deleted). One adapter per state engine implements all.
import type { BlobRef } from '../../shared/api/blob-upload.js';
import type { UploadRecord } from './jobs.js';

/** Which verified blobs a workspace holds. Blobs never cross workspaces: every call names one. */
export interface BlobIndex {
  /**
   * The blobs of `blobs` the workspace holds (indexed and not being collected), each touched
   * (last used = `nowMs`) in the same write, so a blob answered as held is fresh and cannot be
   * collected before the retention time passes again. In no particular order; duplicates in
   * `blobs` are answered once.
   */
  touchHeld(workspaceId: string, blobs: readonly BlobRef[], nowMs: number): Promise<BlobRef[]>;
  /**
   * Records a blob whose verified object is now stored (or touches it when already indexed).
   * False, and nothing written, while the collector is deleting that blob: its object may be
   * gone any moment, so the caller must not report it held.
   */
  record(workspaceId: string, blob: BlobRef, nowMs: number): Promise<boolean>;
  /** Removes an index row that turned out to have no object (never one being collected). */
  forget(workspaceId: string, blob: BlobRef): Promise<void>;
  /**
   * Notes that parts of a multi-part blob are being stored (before each part is written), so the
   * collector can delete the parts of an upload abandoned for longer than the retention time.
   */
  noteParts(workspaceId: string, blob: BlobRef, partSize: number, nowMs: number): Promise<void>;
  /** The parts were assembled (or refused): nothing left to collect under that prefix. */
  partsDone(workspaceId: string, blob: BlobRef, partSize: number): Promise<void>;
}

/** What a commit records: the upload it yields and the blobs that upload (and so its job) needs. */
export interface BlobReferences {
  /**
   * Creates the completed upload `upload` and its references to each of `blobs`, in one
   * transaction: an upload is never visible without the references that keep its blobs.
   */
  commitUpload(upload: UploadRecord, blobs: readonly BlobRef[]): Promise<void>;
}

/** A blob the collector took: its object is to be deleted, then forgotten with `collected`. */
export interface CollectableBlob extends BlobRef {
  workspaceId: string;
}

/** Parts of a multi-part blob not touched since the cutoff. */
export interface StaleParts extends BlobRef {
  workspaceId: string;
  partSize: number;
  /** When a part last arrived (epoch ms): the row is forgotten only if none arrived since. */
  updatedAt: number;
}

/** What the blob collector does to the index. */
export interface BlobCollection {
  /**
   * Takes up to `limit` blobs to delete and marks them as being collected, in one atomic step per
   * blob: last used before `cutoffMs` and referenced by no live upload or job at `now` (a live
   * reference: an upload not yet used by a job and not expired, or a job not in a final state).
   * Also answers blobs a previous, interrupted collection had marked. From then on touchHeld
   * and record treat them as not held.
   */
  claimCollectable(cutoffMs: number, now: Date, limit: number): Promise<CollectableBlob[]>;
  /** Deletes the index row of a blob whose object was deleted (only if it is still marked). */
  collected(blob: CollectableBlob): Promise<void>;
  /** Up to `limit` part uploads last touched before `cutoffMs`. */
  staleParts(cutoffMs: number, limit: number): Promise<StaleParts[]>;
  /** Forgets a part upload whose prefix was deleted. */
  partsCollected(parts: StaleParts): Promise<void>;
  /**
   * Deletes the references of up to `limit` uploads that no longer keep blobs at `now` (expired
   * unused, or their job finished); returns how many references went.
   */
  pruneReferences(now: Date, limit: number): Promise<number>;
}

/** The whole blob store, as an adapter implements it; consumers ask for the roles they use. */
export interface BlobStore extends BlobIndex, BlobReferences, BlobCollection {}
