// A workspace's stored bytes from what the state database records, the same queries on SQLite and
// PostgreSQL: sums over the workspace's rows of three tables (each read by an index on
// workspace_id), never a listing of storage. jobs.output_bytes is derived from a job's outputs on
// every write (rows.ts), and zeroed when retention deletes them.
import type { Kysely } from 'kysely';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import type { StorageUsage } from '../../ports/usage.js';
import type { DB } from './schema.js';

/** PostgreSQL answers sum(int8) as numeric, which the driver gives as text; SQLite as a number; null on no rows. */
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export class SqlStorageUsage implements StorageUsage {
  constructor(private readonly db: Kysely<DB>) {}

  async usedBytes(workspaceId: string): Promise<{ uploads: number; blobs: number; outputs: number; total: number }> {
    const [uploads, blobs, parts, outputs] = await Promise.all([
      // A committed blob project's size is that of blobs counted below: only single-file uploads here.
      this.db
        .selectFrom('uploads')
        .select((eb) => eb.fn.sum<number>('size').as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('completed_at', 'is not', null)
        .where('source_format', 'is', null)
        .executeTakeFirst(),
      this.db
        .selectFrom('blobs')
        .select((eb) => eb.fn.sum<number>('size').as('n'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst(),
      // Blobs whose parts are arriving: counted whole, as they will be once complete.
      this.db
        .selectFrom('blob_uploads')
        .select((eb) => eb.fn.sum<number>('size').as('n'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst(),
      this.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.sum<number>('output_bytes').as('n'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirst(),
    ]);
    const u = num(uploads?.n);
    const b = num(blobs?.n) + num(parts?.n);
    const o = num(outputs?.n);
    return { uploads: u, blobs: b, outputs: o, total: u + b + o };
  }

  async partsInProgressBytes(workspaceId: string, blobs: readonly BlobRef[]): Promise<number> {
    const wanted = new Set(blobs.map((b) => `${b.sha256}-${b.size}`));
    let bytes = 0;
    // Asked only when a query would pass the quota, in batches that keep each statement small.
    const shas = [...new Set(blobs.map((b) => b.sha256))];
    for (let i = 0; i < shas.length; i += 500) {
      const rows = await this.db
        .selectFrom('blob_uploads')
        .select(['sha256', 'size'])
        .distinct()
        .where('workspace_id', '=', workspaceId)
        .where('sha256', 'in', shas.slice(i, i + 500))
        .execute();
      for (const r of rows) if (wanted.has(`${r.sha256}-${num(r.size)}`)) bytes += num(r.size);
    }
    return bytes;
  }
}
