import { sql, type Kysely } from 'kysely';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import type { UploadRecord } from '../../ports/jobs.js';
import { distinctBlobs, SqlBlobStore } from '../sql/blob-store.js';
import { uploadRow } from '../sql/rows.js';
import type { PgDB } from './db.js';

/** Blobs per statement of a bulk write: two arrays of this many elements as parameters. */
const BATCH = 10_000;

/**
 * The blob index on PostgreSQL (migration 004_blobs), shared by every service instance. Bulk
 * writes pass the blobs as two arrays (unnest), one statement per 10,000 blobs.
 */
export class PgBlobStore extends SqlBlobStore {
  constructor(db: Kysely<PgDB>) {
    super(db);
  }

  async touchHeld(workspaceId: string, blobs: readonly BlobRef[], nowMs: number): Promise<BlobRef[]> {
    const distinct = distinctBlobs(blobs);
    const held: BlobRef[] = [];
    for (let i = 0; i < distinct.length; i += BATCH) {
      const batch = distinct.slice(i, i + BATCH);
      // Rows are locked in one order (the sort below the lock), so two requests touching
      // overlapping sets, or the collector marking one, wait for each other instead of deadlocking.
      const { rows } = await sql<{ sha256: string; size: number }>`
        with q as (
          select b.sha256, b.size from blobs b
          join unnest(${batch.map((b) => b.sha256)}::text[], ${batch.map((b) => b.size)}::bigint[]) as q (sha256, size)
            on b.sha256 = q.sha256 and b.size = q.size
          where b.workspace_id = ${workspaceId} and b.collecting_since is null
          order by b.sha256, b.size
          for update of b
        )
        update blobs set last_used_at = ${nowMs}
        from q where blobs.workspace_id = ${workspaceId} and blobs.sha256 = q.sha256 and blobs.size = q.size
        returning blobs.sha256, blobs.size`.execute(this.db);
      held.push(...rows.map((r) => ({ sha256: r.sha256, size: Number(r.size) })));
    }
    return held;
  }

  async commitUpload(upload: UploadRecord, blobs: readonly BlobRef[]): Promise<void> {
    const distinct = distinctBlobs(blobs);
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('uploads').values(uploadRow(upload)).execute();
      for (let i = 0; i < distinct.length; i += BATCH) {
        const batch = distinct.slice(i, i + BATCH);
        await sql`
          insert into blob_refs (slug, workspace_id, sha256, size)
          select ${upload.slug}, ${upload.workspaceId}, q.sha256, q.size
          from unnest(${batch.map((b) => b.sha256)}::text[], ${batch.map((b) => b.size)}::bigint[]) as q (sha256, size)
          on conflict do nothing`.execute(trx);
      }
    });
  }
}
