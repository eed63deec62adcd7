import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import { TERMINAL_STATUSES } from '../../../shared/job-status.js';
import type { BlobStore, CollectableBlob, StaleParts } from '../../ports/blobs.js';
import type { UploadRecord } from '../../ports/jobs.js';
import type { DB } from './schema.js';

/**
 * Whether a live upload or job references the blob row aliased `b` at `nowIso`: an upload not yet
 * used by a job and not expired, or a job in any but a final state (a job whose row is somehow
 * missing counts as live: keeping a blob too long is the safe mistake), including a job requeued
 * from the upload's job (it renders the same stored project).
 */
export function liveReference(nowIso: string): RawBuilder<unknown> {
  const terminal = sql.join([...TERMINAL_STATUSES]);
  return sql`exists (
    select 1 from blob_refs r join uploads u on u.slug = r.slug left join jobs j on j.id = u.job_id
    where r.workspace_id = b.workspace_id and r.sha256 = b.sha256 and r.size = b.size
      and ((u.job_id is null and u.expires_at > ${nowIso})
        or (u.job_id is not null and (j.status is null or j.status not in (${terminal})))
        or ${liveRequeue(sql.ref('u.slug'))}))`;
}

/** Whether an unfinished job requeued from the upload `slug` still renders its project. */
function liveRequeue(slug: RawBuilder<unknown>): RawBuilder<unknown> {
  const terminal = sql.join([...TERMINAL_STATUSES]);
  return sql`exists (select 1 from job_requeues q join jobs jq on jq.id = q.job_id
    where q.upload_slug = ${slug} and jq.status not in (${terminal}))`;
}

/**
 * The BlobStore queries that read and write the same on SQLite and PostgreSQL. Each engine adds
 * the two bulk writes (touching many blobs, committing an upload with many references), which
 * want the engine's own fast path.
 */
export abstract class SqlBlobStore implements BlobStore {
  constructor(protected readonly db: Kysely<DB>) {}

  abstract touchHeld(workspaceId: string, blobs: readonly BlobRef[], nowMs: number): Promise<BlobRef[]>;
  abstract commitUpload(upload: UploadRecord, blobs: readonly BlobRef[]): Promise<void>;

  async record(workspaceId: string, blob: BlobRef, nowMs: number): Promise<boolean> {
    const r = await this.db
      .insertInto('blobs')
      .values({
        workspace_id: workspaceId,
        sha256: blob.sha256,
        size: blob.size,
        created_at: new Date(nowMs).toISOString(),
        last_used_at: nowMs,
        collecting_since: null,
      })
      .onConflict((oc) =>
        oc
          .columns(['workspace_id', 'sha256', 'size'])
          .doUpdateSet({ last_used_at: nowMs })
          .where('blobs.collecting_since', 'is', null),
      )
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async forget(workspaceId: string, blob: BlobRef): Promise<void> {
    await this.db
      .deleteFrom('blobs')
      .where('workspace_id', '=', workspaceId)
      .where('sha256', '=', blob.sha256)
      .where('size', '=', blob.size)
      .where('collecting_since', 'is', null)
      .execute();
  }

  async noteParts(workspaceId: string, blob: BlobRef, partSize: number, nowMs: number): Promise<void> {
    await this.db
      .insertInto('blob_uploads')
      .values({
        workspace_id: workspaceId,
        sha256: blob.sha256,
        size: blob.size,
        part_size: partSize,
        updated_at: nowMs,
      })
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'sha256', 'size', 'part_size']).doUpdateSet({ updated_at: nowMs }),
      )
      .execute();
  }

  async partsDone(workspaceId: string, blob: BlobRef, partSize: number): Promise<void> {
    await this.db
      .deleteFrom('blob_uploads')
      .where('workspace_id', '=', workspaceId)
      .where('sha256', '=', blob.sha256)
      .where('size', '=', blob.size)
      .where('part_size', '=', partSize)
      .execute();
  }

  async claimCollectable(cutoffMs: number, now: Date, limit: number): Promise<CollectableBlob[]> {
    const cols = ['workspace_id', 'sha256', 'size'] as const;
    // Marked by a sweep that did not finish: their objects may be half deleted, so finish them first.
    const pending = await this.db
      .selectFrom('blobs')
      .select(cols)
      .where('collecting_since', 'is not', null)
      .limit(limit)
      .execute();
    const nowIso = now.toISOString();
    const candidates = await this.db
      .selectFrom('blobs as b')
      .select(cols)
      .where('b.last_used_at', '<', cutoffMs)
      .where('b.collecting_since', 'is', null)
      .where(sql<boolean>`not ${liveReference(nowIso)}`)
      .orderBy('b.last_used_at')
      .limit(Math.max(0, limit - pending.length))
      .execute();
    const taken = [...pending];
    for (const c of candidates) {
      // One row per statement, every condition checked again in it: a query or commit that
      // touched the blob, or a job created from it since the pick, keeps it.
      const r = await this.db
        .updateTable('blobs as b')
        .set({ collecting_since: now.getTime() })
        .where('b.workspace_id', '=', c.workspace_id)
        .where('b.sha256', '=', c.sha256)
        .where('b.size', '=', c.size)
        .where('b.collecting_since', 'is', null)
        .where('b.last_used_at', '<', cutoffMs)
        .where(sql<boolean>`not ${liveReference(nowIso)}`)
        .executeTakeFirst();
      if (r.numUpdatedRows > 0n) taken.push(c);
    }
    return taken.map((r) => ({ workspaceId: r.workspace_id, sha256: r.sha256, size: r.size }));
  }

  async collected(blob: CollectableBlob): Promise<void> {
    await this.db
      .deleteFrom('blobs')
      .where('workspace_id', '=', blob.workspaceId)
      .where('sha256', '=', blob.sha256)
      .where('size', '=', blob.size)
      .where('collecting_since', 'is not', null)
      .execute();
  }

  async staleParts(cutoffMs: number, limit: number): Promise<StaleParts[]> {
    const rows = await this.db
      .selectFrom('blob_uploads')
      .selectAll()
      .where('updated_at', '<', cutoffMs)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      workspaceId: r.workspace_id,
      sha256: r.sha256,
      size: r.size,
      partSize: r.part_size,
      updatedAt: r.updated_at,
    }));
  }

  async partsCollected(p: StaleParts): Promise<void> {
    // Only if no part arrived since: a resumed upload keeps its row (its parts are resent if lost).
    await this.db
      .deleteFrom('blob_uploads')
      .where('workspace_id', '=', p.workspaceId)
      .where('sha256', '=', p.sha256)
      .where('size', '=', p.size)
      .where('part_size', '=', p.partSize)
      .where('updated_at', '=', p.updatedAt)
      .execute();
  }

  async pruneReferences(now: Date, limit: number): Promise<number> {
    // Whether a reference is dead depends on its upload alone: delete whole uploads' references.
    const dead = await this.db
      .selectFrom('blob_refs as r')
      .leftJoin('uploads as u', 'u.slug', 'r.slug')
      .leftJoin('jobs as j', 'j.id', 'u.job_id')
      .select('r.slug')
      .distinct()
      .where((eb) =>
        eb.or([
          eb('u.slug', 'is', null),
          eb.and([eb('u.job_id', 'is', null), eb('u.expires_at', '<=', now.toISOString())]),
          eb.and([
            eb('u.job_id', 'is not', null),
            eb('j.status', 'in', [...TERMINAL_STATUSES]),
            sql<boolean>`not ${liveRequeue(sql.ref('r.slug'))}`,
          ]),
        ]),
      )
      .limit(limit)
      .execute();
    if (dead.length === 0) return 0;
    const r = await this.db
      .deleteFrom('blob_refs')
      .where(
        'slug',
        'in',
        dead.map((d) => d.slug),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}

/** Distinct blobs of a request (a client may name one blob for several files). */
export function distinctBlobs(blobs: readonly BlobRef[]): BlobRef[] {
  const seen = new Map<string, BlobRef>();
  for (const b of blobs) seen.set(`${b.sha256}-${b.size}`, { sha256: b.sha256, size: b.size });
  return [...seen.values()];
}
