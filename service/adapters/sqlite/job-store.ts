import type { Kysely } from 'kysely';
import type { JobProgress } from '../../../shared/api/progress.js';
import type { JobStatus } from '../../../shared/job-status.js';
import {
  UploadClaimError,
  type JobInternal,
  type JobPatch,
  type JobRecord,
  type JobStore,
  type ListOptions,
  type StoredJobJson,
  type UploadRecord,
} from '../../ports.js';
import type { Database, Statement } from 'better-sqlite3';
import type { DB, SqliteHandle } from './db.js';
import { emptyProgress } from '../../domain/progress.js';
import { servedPreviewKey } from '../../domain/jobs.js';

type JobRow = DB['jobs'];

function toRecord(row: Pick<JobRow, 'doc' | 'internal'>): JobRecord {
  return { job: JSON.parse(row.doc) as JobRecord['job'], internal: JSON.parse(row.internal) as JobInternal };
}

function toUpload(r: DB['uploads']): UploadRecord {
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
  };
}

/** Job store on SQLite: indexed columns for lookups and listing, the job itself as JSON. */
type DocRow = Pick<JobRow, 'doc' | 'internal'>;
type JsonRow = { doc: string; preview_key: string | null };
type PageReader<R> = (workspaceId: string, opts: ListOptions) => { rows: R[]; total: number };

/** Prepares the page queries for `columns`, run in one read transaction so page and total agree. */
function pageReader<R>(raw: Database, columns: string): PageReader<R> {
  const page: Statement<[string, number, number], R> = raw.prepare(
    `select ${columns} from jobs where workspace_id = ? order by seq desc limit ? offset ?`,
  );
  const pageByStatus: Statement<[string, string, number, number], R> = raw.prepare(
    `select ${columns} from jobs where workspace_id = ? and status = ? order by seq desc limit ? offset ?`,
  );
  const total: Statement<[string], { n: number | null }> = raw.prepare('select sum(n) as n from job_counts where workspace_id = ?');
  const totalByStatus: Statement<[string, string], { n: number }> = raw.prepare(
    'select n from job_counts where workspace_id = ? and status = ?',
  );
  return raw.transaction((workspaceId: string, opts: ListOptions) => {
    const offset = (opts.page - 1) * opts.pageSize;
    return opts.status
      ? {
          rows: pageByStatus.all(workspaceId, opts.status, opts.pageSize, offset),
          total: totalByStatus.get(workspaceId, opts.status)?.n ?? 0,
        }
      : { rows: page.all(workspaceId, opts.pageSize, offset), total: total.get(workspaceId)?.n ?? 0 };
  });
}

/** When the job's outputs expire, while they exist (ISO strings sort by time). */
function deleteAfter(rec: JobRecord): string | null {
  const o = rec.job.output;
  return o && !o.isDeletedForClient ? (o.scheduledForDeletionAt ?? null) : null;
}

const toJson = (r: JsonRow): StoredJobJson => ({ json: r.doc, previewKey: r.preview_key });

export class SqliteJobStore implements JobStore {
  private readonly db: Kysely<DB>;
  // Reads on every API request use prepared statements (see SqliteHandle.raw).
  private readonly q: {
    get: Statement<[string, string], DocRow>;
    getById: Statement<[string], DocRow>;
    getJson: Statement<[string, string], JsonRow>;
  };
  private readonly readPage: PageReader<DocRow>;
  private readonly readJsonPage: PageReader<JsonRow>;

  constructor(handle: SqliteHandle) {
    this.db = handle.db;
    const raw: Database = handle.raw;
    this.q = {
      get: raw.prepare('select doc, internal from jobs where id = ? and workspace_id = ?'),
      getById: raw.prepare('select doc, internal from jobs where id = ?'),
      getJson: raw.prepare('select doc, preview_key from jobs where id = ? and workspace_id = ?'),
    };
    this.readPage = pageReader<DocRow>(raw, 'doc, internal');
    // Serving never needs `internal`, which grows with every output of a finished job.
    this.readJsonPage = pageReader<JsonRow>(raw, 'doc, preview_key');
  }

  /** Keeps job_counts in step; runs inside the caller's transaction. */
  private async count(trx: Kysely<DB>, workspaceId: string, status: string, delta: number): Promise<void> {
    await trx
      .insertInto('job_counts')
      .values({ workspace_id: workspaceId, status, n: delta })
      .onConflict((oc) => oc.columns(['workspace_id', 'status']).doUpdateSet((eb) => ({ n: eb('job_counts.n', '+', delta) })))
      .execute();
  }

  async createUpload(u: UploadRecord): Promise<void> {
    await this.db
      .insertInto('uploads')
      .values({
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
      })
      .execute();
  }

  async getUpload(workspaceId: string, slug: string): Promise<UploadRecord | undefined> {
    const r = await this.db
      .selectFrom('uploads')
      .selectAll()
      .where('slug', '=', slug)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return r && toUpload(r);
  }

  async completeUpload(slug: string, size: number, sha256: string | null): Promise<void> {
    await this.db
      .updateTable('uploads')
      .set({ completed_at: new Date().toISOString(), size, sha256 })
      .where('slug', '=', slug)
      .execute();
  }

  async createJobFromUpload(slug: string, rec: JobRecord): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('uploads')
        .set({ job_id: rec.job.id })
        .where('slug', '=', slug)
        .where('workspace_id', '=', rec.job.workspaceId)
        .where('job_id', 'is', null)
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n) {
        const exists = await trx.selectFrom('uploads').select('slug').where('slug', '=', slug).executeTakeFirst();
        throw new UploadClaimError(exists ? 'UPLOAD_ALREADY_USED' : 'UPLOAD_NOT_FOUND');
      }
      await trx
        .insertInto('jobs')
        .values({
          id: rec.job.id,
          workspace_id: rec.job.workspaceId,
          status: rec.job.status,
          created_at: rec.job.createdAt,
          updated_at: rec.job.updatedAt,
          doc: JSON.stringify(rec.job),
          internal: JSON.stringify(rec.internal),
          preview_key: servedPreviewKey(rec),
          delete_after: deleteAfter(rec),
        })
        .execute();
      await this.count(trx, rec.job.workspaceId, rec.job.status, 1);
    });
  }

  async get(workspaceId: string, id: string): Promise<JobRecord | undefined> {
    const r = this.q.get.get(id, workspaceId);
    return r && toRecord(r);
  }

  async getById(id: string): Promise<JobRecord | undefined> {
    const r = this.q.getById.get(id);
    return r && toRecord(r);
  }

  async list(workspaceId: string, opts: ListOptions): Promise<{ records: JobRecord[]; total: number }> {
    const read = this.readPage(workspaceId, opts);
    return { records: read.rows.map(toRecord), total: Number(read.total) };
  }

  async getJson(workspaceId: string, id: string): Promise<StoredJobJson | undefined> {
    const r = this.q.getJson.get(id, workspaceId);
    return r && toJson(r);
  }

  async listJson(workspaceId: string, opts: ListOptions): Promise<{ items: StoredJobJson[]; total: number }> {
    const read = this.readJsonPage(workspaceId, opts);
    return { items: read.rows.map(toJson), total: Number(read.total) };
  }

  async transition(
    id: string,
    from: readonly JobStatus[],
    to: JobStatus,
    patch: JobPatch = {},
    internal: Partial<JobInternal> = {},
  ): Promise<JobRecord | undefined> {
    return this.write(id, (rec) => (from.includes(rec.job.status) ? { status: to, patch, internal } : undefined));
  }

  async update(id: string, patch: JobPatch, internal: Partial<JobInternal> = {}): Promise<JobRecord | undefined> {
    return this.write(id, (rec) => ({ status: rec.job.status, patch, internal }));
  }

  /** Read-modify-write in one transaction (SQLite serialises writers, so this is a true CAS). */
  private async write(
    id: string,
    decide: (rec: JobRecord) => { status: JobStatus; patch: JobPatch; internal: Partial<JobInternal> } | undefined,
  ): Promise<JobRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('jobs').select(['doc', 'internal']).where('id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      const rec = toRecord(row);
      const change = decide(rec);
      if (!change) return undefined;
      const updatedAt = new Date().toISOString();
      const next: JobRecord = {
        job: { ...rec.job, ...change.patch, status: change.status, updatedAt },
        internal: { ...rec.internal, ...change.internal },
      };
      if (next.job.status !== rec.job.status) {
        await this.count(trx, rec.job.workspaceId, rec.job.status, -1);
        await this.count(trx, rec.job.workspaceId, next.job.status, 1);
      }
      await trx
        .updateTable('jobs')
        .set({
          status: next.job.status,
          updated_at: updatedAt,
          doc: JSON.stringify(next.job),
          internal: JSON.stringify(next.internal),
          preview_key: servedPreviewKey(next),
          delete_after: deleteAfter(next),
        })
        .where('id', '=', id)
        .execute();
      return next;
    });
  }

  async listExpired(now: Date, limit: number): Promise<JobRecord[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['doc', 'internal'])
      .where('delete_after', 'is not', null)
      .where('delete_after', '<=', now.toISOString())
      .orderBy('delete_after')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async getProgress(id: string): Promise<JobProgress | undefined> {
    const r = await this.db.selectFrom('job_progress').select('doc').where('job_id', '=', id).executeTakeFirst();
    return r && (JSON.parse(r.doc) as JobProgress);
  }

  async setProgress(p: JobProgress): Promise<void> {
    const job = await this.db.selectFrom('jobs').select('workspace_id').where('id', '=', p.jobId).executeTakeFirst();
    if (!job) return;
    const doc = JSON.stringify(p);
    const now = new Date().toISOString();
    await this.db
      .insertInto('job_progress')
      .values({ job_id: p.jobId, workspace_id: job.workspace_id, doc, updated_at: now })
      .onConflict((oc) => oc.column('job_id').doUpdateSet({ doc, updated_at: now }))
      .execute();
  }

  async listProgress(workspaceId: string, statuses: readonly JobStatus[]): Promise<JobProgress[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db
      .selectFrom('jobs')
      .leftJoin('job_progress', 'job_progress.job_id', 'jobs.id')
      .select(['jobs.id', 'jobs.status', 'job_progress.doc'])
      .where('jobs.workspace_id', '=', workspaceId)
      .where('jobs.status', 'in', statuses)
      .orderBy('jobs.seq', 'desc')
      .execute();
    return rows.map((r) =>
      r.doc ? { ...(JSON.parse(r.doc) as JobProgress), status: r.status as JobStatus } : emptyProgress(r.id, r.status as JobStatus),
    );
  }
}
