import type { JobRecord, ListOptions, StoredJobJson } from '../../ports/jobs.js';
import type { Database, Statement, Transaction } from 'better-sqlite3';
import type { DB, SqliteHandle } from './db.js';
import { SqlJobStore } from '../sql/job-store.js';
import { applyChange, jobColumns, toJson, toRecord, type JobChange } from '../sql/rows.js';
import type { CommitWatch } from './commit-watch.js';
import { exclusive } from './write-lock.js';

type JobRow = DB['jobs'];
type DocRow = Pick<JobRow, 'doc' | 'internal'>;
type JsonRow = { doc: string; preview_key: string | null };
/** Documents GET /jobs/{id} keeps in memory (about 1 KB each). */
const JSON_CACHE_LIMIT = 2_000;
type PageReader<R> = (workspaceId: string, opts: ListOptions) => { rows: R[]; total: number };

/** Prepares the page queries for `columns`, run in one read transaction so page and total agree. */
function pageReader<R>(raw: Database, columns: string): PageReader<R> {
  const page: Statement<[string, number, number], R> = raw.prepare(
    `select ${columns} from jobs where workspace_id = ? order by seq desc limit ? offset ?`,
  );
  const pageByStatus: Statement<[string, string, number, number], R> = raw.prepare(
    `select ${columns} from jobs where workspace_id = ? and status = ? order by seq desc limit ? offset ?`,
  );
  const total: Statement<[string], { n: number | null }> = raw.prepare(
    'select sum(n) as n from job_counts where workspace_id = ?',
  );
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

type WriteColumns = ReturnType<typeof jobColumns> & { id: string };

/** The compare-and-set behind transition and update, on prepared statements; run it with `.immediate`. */
function jobWriter(raw: Database) {
  const read: Statement<[string], DocRow> = raw.prepare('select doc, internal from jobs where id = ?');
  const save: Statement<[WriteColumns], void> = raw.prepare(
    `update jobs set status = @status, updated_at = @updated_at, doc = @doc, internal = @internal,
       preview_key = @preview_key, delete_after = @delete_after, output_bytes = @output_bytes where id = @id`,
  );
  // The same upsert as SqlJobStore.count, prepared.
  const count: Statement<[string, string, number], void> = raw.prepare(
    `insert into job_counts (workspace_id, status, n) values (?, ?, ?)
     on conflict (workspace_id, status) do update set n = n + excluded.n`,
  );
  return raw.transaction((id: string, decide: (rec: JobRecord) => JobChange): JobRecord | undefined => {
    const row = read.get(id);
    if (!row) return undefined;
    const rec = toRecord(row);
    const change = decide(rec);
    if (!change) return undefined;
    const next = applyChange(rec, change);
    if (next.job.status !== rec.job.status) {
      count.run(rec.job.workspaceId, rec.job.status, -1);
      count.run(rec.job.workspaceId, next.job.status, 1);
    }
    save.run({ ...jobColumns(next), id });
    return next;
  });
}

type RequeueLink = Parameters<SqlJobStore['createRequeue']>[0];

/**
 * SqlJobStore.createRequeue on prepared statements, run with `.immediate`: a Kysely transaction
 * would hold the write lock across an await, stalling another connection of this process.
 */
function requeueWriter(raw: Database) {
  const claim: Statement<[string, string, string, string, string | null, string], void> = raw.prepare(
    `insert into job_requeues (source_job_id, selection, job_id, workspace_id, upload_slug, created_at) values (?, ?, \
?, ?, ?, ?)
     on conflict (source_job_id, selection) do nothing`,
  );
  const existing: Statement<[string, string], { job_id: string }> = raw.prepare(
    'select job_id from job_requeues where source_job_id = ? and selection = ?',
  );
  const insertJob: Statement<[WriteColumns & { created_at: string; workspace_id: string }], void> = raw.prepare(
    `insert into jobs (id, workspace_id, created_at, status, updated_at, doc, internal, preview_key, delete_after, \
output_bytes)
     values (@id, @workspace_id, @created_at, @status, @updated_at, @doc, @internal, @preview_key, @delete_after, \
@output_bytes)`,
  );
  const count: Statement<[string, string, number], void> = raw.prepare(
    `insert into job_counts (workspace_id, status, n) values (?, ?, ?)
     on conflict (workspace_id, status) do update set n = n + excluded.n`,
  );
  return raw.transaction((link: RequeueLink, rec: JobRecord): { jobId: string; created: boolean } => {
    const j = rec.job;
    if (claim.run(link.sourceJobId, link.selection, j.id, j.workspaceId, link.uploadSlug, j.createdAt).changes === 0) {
      return { jobId: existing.get(link.sourceJobId, link.selection)!.job_id, created: false };
    }
    insertJob.run({ ...jobColumns(rec), id: j.id, workspace_id: j.workspaceId, created_at: j.createdAt });
    count.run(j.workspaceId, j.status, 1);
    return { jobId: j.id, created: true };
  });
}

/** Job store on SQLite: indexed columns for lookups and listing, the job itself as JSON. */
export class SqliteJobStore extends SqlJobStore {
  // Reads on every API request use prepared statements (see SqliteHandle.raw).
  private readonly q: {
    get: Statement<[string, string], DocRow>;
    getById: Statement<[string], DocRow>;
    getJson: Statement<[string, string], JsonRow>;
  };
  private readonly readPage: PageReader<DocRow>;
  private readonly readJsonPage: PageReader<JsonRow>;
  /**
   * GET /jobs/{id}'s documents, by id: clients poll the same few jobs over and over. Dropped
   * when this store writes the job, and wholesale once another connection has committed
   * (CommitWatch: within a millisecond). Jobs are only ever written through write().
   */
  private readonly jsonCache = new Map<string, { workspaceId: string; stored: StoredJobJson }>();
  private jsonVersion = -1;
  private readonly commits: CommitWatch;
  /** transition and update (see write). */
  private readonly writeTx: Transaction<(id: string, decide: (rec: JobRecord) => JobChange) => JobRecord | undefined>;
  private readonly requeueTx: ReturnType<typeof requeueWriter>;

  constructor(handle: SqliteHandle) {
    super(handle.db);
    const raw: Database = handle.raw;
    this.q = {
      get: raw.prepare('select doc, internal from jobs where id = ? and workspace_id = ?'),
      getById: raw.prepare('select doc, internal from jobs where id = ?'),
      getJson: raw.prepare('select doc, preview_key from jobs where id = ? and workspace_id = ?'),
    };
    this.readPage = pageReader<DocRow>(raw, 'doc, internal');
    // Serving never needs `internal`, which grows with every output of a finished job.
    this.readJsonPage = pageReader<JsonRow>(raw, 'doc, preview_key');
    this.writeTx = jobWriter(raw);
    this.requeueTx = requeueWriter(raw);
    this.commits = handle.commits;
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
    const version = this.commits.version();
    if (version !== this.jsonVersion || this.jsonCache.size >= JSON_CACHE_LIMIT) {
      this.jsonCache.clear();
      this.jsonVersion = version;
    }
    const hit = this.jsonCache.get(id);
    // Ids are unique: a cached job of another workspace is not found, as in the query.
    if (hit) return hit.workspaceId === workspaceId ? hit.stored : undefined;
    const r = this.q.getJson.get(id, workspaceId);
    if (!r) return undefined;
    const stored = toJson(r);
    this.jsonCache.set(id, { workspaceId, stored });
    return stored;
  }

  async listJson(workspaceId: string, opts: ListOptions): Promise<{ items: StoredJobJson[]; total: number }> {
    const read = this.readJsonPage(workspaceId, opts);
    return { items: read.rows.map(toJson), total: Number(read.total) };
  }

  override async createRequeue(link: RequeueLink, rec: JobRecord): Promise<{ jobId: string; created: boolean }> {
    return exclusive(this.db, () => this.requeueTx.immediate(link, rec));
  }

  /**
   * Read-modify-write as one IMMEDIATE transaction of prepared statements: the write lock is
   * taken before the read, so this is a true compare-and-set across connections and processes
   * sharing the file, and a writer that finds the lock taken waits (busy timeout) instead of
   * failing with "database is locked" (see ./write-lock.ts).
   */
  protected async write(id: string, decide: (rec: JobRecord) => JobChange): Promise<JobRecord | undefined> {
    return exclusive(this.db, () => {
      try {
        return this.writeTx.immediate(id, decide);
      } finally {
        // In the same synchronous step as the commit: no read can cache the old document between.
        this.jsonCache.delete(id);
      }
    });
  }
}
