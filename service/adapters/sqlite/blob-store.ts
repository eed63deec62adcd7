import type { Statement, Transaction } from 'better-sqlite3';
import type { BlobRef } from '../../../shared/api/blob-upload.js';
import type { UploadRecord } from '../../ports/jobs.js';
import { distinctBlobs, SqlBlobStore } from '../sql/blob-store.js';
import { uploadRow } from '../sql/rows.js';
import type { DB } from '../sql/schema.js';
import type { SqliteHandle } from './db.js';
import { exclusive } from './write-lock.js';

type Touch = (workspaceId: string, blobs: readonly BlobRef[], nowMs: number) => BlobRef[];
type Commit = (upload: DB['uploads'], blobs: readonly BlobRef[]) => void;

/**
 * The blob index in the service's SQLite database (tables of 010_blobs). A project names up to
 * 200,000 blobs: the bulk writes run prepared statements in one IMMEDIATE transaction (the write
 * lock taken first, see ./write-lock.ts), a few microseconds a row.
 */
export class SqliteBlobStore extends SqlBlobStore {
  private readonly touchTx: Transaction<Touch>;
  private readonly commitTx: Transaction<Commit>;

  constructor(handle: Pick<SqliteHandle, 'db' | 'raw'>) {
    super(handle.db);
    const raw = handle.raw;
    const touch: Statement<[number, string, string, number]> = raw.prepare(
      'update blobs set last_used_at = ? where workspace_id = ? and sha256 = ? and size = ? and ' +
        'collecting_since is null',
    );
    this.touchTx = raw.transaction((workspaceId, blobs, nowMs) =>
      blobs.filter((b) => touch.run(nowMs, workspaceId, b.sha256, b.size).changes > 0),
    );
    const insertUpload: Statement<[DB['uploads']]> = raw.prepare(
      `insert into uploads (slug, workspace_id, user_id, file_name, file_type, object_key, expires_at, created_at, \
completed_at, size, sha256, job_id, source_format)
       values (@slug, @workspace_id, @user_id, @file_name, @file_type, @object_key, @expires_at, @created_at, \
@completed_at, @size, @sha256, @job_id, @source_format)`,
    );
    const insertRef: Statement<[string, string, string, number]> = raw.prepare(
      'insert or ignore into blob_refs (slug, workspace_id, sha256, size) values (?, ?, ?, ?)',
    );
    this.commitTx = raw.transaction((upload, blobs) => {
      insertUpload.run(upload);
      for (const b of blobs) insertRef.run(upload.slug, upload.workspace_id, b.sha256, b.size);
    });
  }

  async touchHeld(workspaceId: string, blobs: readonly BlobRef[], nowMs: number): Promise<BlobRef[]> {
    const distinct = distinctBlobs(blobs);
    if (distinct.length === 0) return [];
    return exclusive(this.db, () => this.touchTx.immediate(workspaceId, distinct, nowMs));
  }

  async commitUpload(upload: UploadRecord, blobs: readonly BlobRef[]): Promise<void> {
    const row = uploadRow(upload);
    const distinct = distinctBlobs(blobs);
    await exclusive(this.db, () => this.commitTx.immediate(row, distinct));
  }
}
