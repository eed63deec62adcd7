import type { Kysely } from 'kysely';
import { assertMove } from '../../domain/job-lifecycle.js';
import type { JobProgress } from '../../../shared/api/progress.js';
import type { JobStatus } from '../../../shared/job-status.js';
import type { JobScheduling, PreviewGate } from '../../../shared/api/scheduling.js';
import {
  UploadClaimError,
  type JobInternal,
  type JobPatch,
  type JobRecord,
  type JobStore,
  type ListOptions,
  type SchedulingFields,
  type StoredJobJson,
  type UploadRecord,
} from '../../ports/jobs.js';
import { emptyProgress } from '../../domain/progress.js';
import { dependencyOutcome, initialScheduling } from '../../domain/scheduling.js';
import { jobColumns, toRecord, toUpload, uploadRow, type JobChange } from './rows.js';
import type { DB } from './schema.js';
import type { RequeueLinkRecord, RequeueStore } from '../../ports/requeues.js';
import type { JobEndFeed } from '../../ports/dependency-waits.js';

/** `fields` (those not undefined) over the job's scheduling as stored, or over the defaults when it has none. */
function merged(rec: JobRecord, fields: SchedulingFields): JobScheduling {
  const set = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  return { ...(rec.job.scheduling ?? initialScheduling(undefined, [])), ...set };
}

/**
 * The JobStore queries that read and write the same on SQLite and PostgreSQL. Each engine adds
 * its serving reads (the hot path) and `write`, the compare-and-set both transition and update
 * go through, which needs the engine's own concurrency guarantee.
 */
export abstract class SqlJobStore implements JobStore, RequeueStore, JobEndFeed {
  private readonly endListeners: ((jobId: string) => Promise<void>)[] = [];

  constructor(protected readonly db: Kysely<DB>) {}

  abstract get(workspaceId: string, id: string): Promise<JobRecord | undefined>;
  abstract getById(id: string): Promise<JobRecord | undefined>;
  abstract list(workspaceId: string, opts: ListOptions): Promise<{ records: JobRecord[]; total: number }>;
  abstract getJson(workspaceId: string, id: string): Promise<StoredJobJson | undefined>;
  abstract listJson(workspaceId: string, opts: ListOptions): Promise<{ items: StoredJobJson[]; total: number }>;
  /**
   * Applies what `decide` returns for the current record, atomically; undefined when it returned
   * nothing or the job is missing.
   */
  protected abstract write(id: string, decide: (rec: JobRecord) => JobChange): Promise<JobRecord | undefined>;

  /** Keeps job_counts in step; runs inside the caller's transaction. */
  protected async count(trx: Kysely<DB>, workspaceId: string, status: string, delta: number): Promise<void> {
    await trx
      .insertInto('job_counts')
      .values({ workspace_id: workspaceId, status, n: delta })
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'status']).doUpdateSet((eb) => ({ n: eb('job_counts.n', '+', delta) })),
      )
      .execute();
  }

  async createUpload(u: UploadRecord): Promise<void> {
    await this.db.insertInto('uploads').values(uploadRow(u)).execute();
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
      // The upload row is the claim: a second creator waits for this one and then matches nothing.
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
          created_at: rec.job.createdAt,
          ...jobColumns(rec),
        })
        .execute();
      await this.count(trx, rec.job.workspaceId, rec.job.status, 1);
    });
  }

  async createRequeue(
    link: { sourceJobId: string; selection: string; uploadSlug: string | null },
    rec: JobRecord,
  ): Promise<{ jobId: string; created: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      // The link row is the claim, written first (SQLite: a transaction that starts with a write
      // takes the lock at once; PostgreSQL: a concurrent identical insert waits for this one, then
      // does nothing and reads this job).
      const inserted = await trx
        .insertInto('job_requeues')
        .values({
          source_job_id: link.sourceJobId,
          selection: link.selection,
          job_id: rec.job.id,
          workspace_id: rec.job.workspaceId,
          upload_slug: link.uploadSlug,
          created_at: rec.job.createdAt,
        })
        .onConflict((oc) => oc.columns(['source_job_id', 'selection']).doNothing())
        .returning('job_id')
        .executeTakeFirst();
      if (!inserted) {
        const existing = await trx
          .selectFrom('job_requeues')
          .select('job_id')
          .where('source_job_id', '=', link.sourceJobId)
          .where('selection', '=', link.selection)
          .executeTakeFirstOrThrow();
        return { jobId: existing.job_id, created: false };
      }
      await trx
        .insertInto('jobs')
        .values({
          id: rec.job.id,
          workspace_id: rec.job.workspaceId,
          created_at: rec.job.createdAt,
          ...jobColumns(rec),
        })
        .execute();
      await this.count(trx, rec.job.workspaceId, rec.job.status, 1);
      return { jobId: rec.job.id, created: true };
    });
  }

  async requeueLinks(jobId: string): Promise<{ from: RequeueLinkRecord | undefined; to: RequeueLinkRecord[] }> {
    const rows = await this.db
      .selectFrom('job_requeues')
      .select(['source_job_id', 'job_id', 'selection', 'created_at'])
      .where((eb) => eb.or([eb('job_id', '=', jobId), eb('source_job_id', '=', jobId)]))
      .orderBy('created_at')
      .orderBy('job_id')
      .execute();
    const links = rows.map((r) => ({
      sourceJobId: r.source_job_id,
      jobId: r.job_id,
      selection: r.selection,
      createdAt: r.created_at,
    }));
    return { from: links.find((l) => l.jobId === jobId), to: links.filter((l) => l.sourceJobId === jobId) };
  }

  async transition(
    id: string,
    from: readonly JobStatus[],
    to: JobStatus,
    patch: JobPatch = {},
    internal: Partial<JobInternal> = {},
    scheduling?: SchedulingFields,
  ): Promise<JobRecord | undefined> {
    // The gate, again at the write: a caller that bypassed the named moves still cannot break the table.
    for (const s of from) assertMove(s, to);
    const rec = await this.write(id, (rec) => {
      if (!from.includes(rec.job.status)) return undefined;
      return { status: to, patch: scheduling ? { ...patch, scheduling: merged(rec, scheduling) } : patch, internal };
    });
    // Whoever moved it (a route, a worker here or through the worker API), jobs waiting for it look again.
    if (rec && dependencyOutcome(to) !== 'waiting') for (const listener of this.endListeners) await listener(id);
    return rec;
  }

  /** JobEndFeed (ports/dependency-waits.ts): told after each move to completed, failed or canceled. */
  onJobEnded(listener: (jobId: string) => Promise<void>): void {
    this.endListeners.push(listener);
  }

  async update(id: string, patch: JobPatch, internal: Partial<JobInternal> = {}): Promise<JobRecord | undefined> {
    return this.write(id, (rec) => ({ status: rec.job.status, patch, internal }));
  }

  async setPreviewGate(
    id: string,
    from: readonly PreviewGate[],
    to: { gate: PreviewGate; frames?: number[] },
    internal: Partial<JobInternal> = {},
  ): Promise<JobRecord | undefined> {
    return this.write(id, (rec) => {
      const s = rec.job.scheduling;
      if (!s || !from.includes(s.previews?.gate ?? 'none')) return undefined;
      const previews = { frames: to.frames ?? s.previews?.frames ?? [], gate: to.gate };
      return { status: rec.job.status, patch: { scheduling: { ...s, previews } }, internal };
    });
  }

  async setSchedulingFields(id: string, fields: SchedulingFields): Promise<JobRecord | undefined> {
    return this.write(id, (rec) => ({
      status: rec.job.status,
      patch: { scheduling: merged(rec, fields) },
      internal: {},
    }));
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
      r.doc
        ? { ...(JSON.parse(r.doc) as JobProgress), status: r.status as JobStatus }
        : emptyProgress(r.id, r.status as JobStatus),
    );
  }
}
