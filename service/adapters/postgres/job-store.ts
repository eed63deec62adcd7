import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { JobRecord, ListOptions, StoredJobJson } from '../../ports/jobs.js';
import { SqlJobStore } from '../sql/job-store.js';
import { applyChange, jobColumns, toJson, toRecord, type JobChange } from '../sql/rows.js';
import type { PgDB } from './db.js';

/** Rounds of read-decide-write a write retries while other writers keep changing the job under it. */
const MAX_WRITE_ROUNDS = 50;

/**
 * Job store on PostgreSQL: the same tables and JSON-as-text documents as SQLite, safe with
 * several service instances on one database. Writes are optimistic compare-and-set on the row
 * version (xmin), so no row lock is held while the next document is built.
 */
export class PgJobStore extends SqlJobStore {
  constructor(db: Kysely<PgDB>) {
    super(db);
  }

  async get(workspaceId: string, id: string): Promise<JobRecord | undefined> {
    const r = await this.db
      .selectFrom('jobs')
      .select(['doc', 'internal'])
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async getById(id: string): Promise<JobRecord | undefined> {
    const r = await this.db.selectFrom('jobs').select(['doc', 'internal']).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async getJson(workspaceId: string, id: string): Promise<StoredJobJson | undefined> {
    const r = await this.db
      .selectFrom('jobs')
      .select(['doc', 'preview_key'])
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return r && toJson(r);
  }

  async list(workspaceId: string, opts: ListOptions): Promise<{ records: JobRecord[]; total: number }> {
    const page = await this.page<{ doc: string; internal: string }>(workspaceId, opts, sql`doc, internal`);
    return { records: page.rows.map(toRecord), total: page.total };
  }

  async listJson(workspaceId: string, opts: ListOptions): Promise<{ items: StoredJobJson[]; total: number }> {
    // Serving never needs `internal`, which grows with every output of a finished job.
    const page = await this.page<{ doc: string; preview_key: string | null }>(workspaceId, opts, sql`doc, preview_key`);
    return { items: page.rows.map(toJson), total: page.total };
  }

  /**
   * One page, newest first, and the total from job_counts, in one statement so both come from
   * the same snapshot. The total row is there even when the page is past the end.
   */
  private async page<R extends { doc: string }>(workspaceId: string, opts: ListOptions, columns: RawBuilder<unknown>) {
    const where = opts.status
      ? sql`workspace_id = ${workspaceId} and status = ${opts.status}`
      : sql`workspace_id = ${workspaceId}`;
    const { rows } = await sql<{ total: number } & { [K in keyof R]: R[K] | null }>`
      select t.total, p.*
      from (select coalesce(sum(n), 0)::bigint as total from job_counts where ${where}) t
      left join lateral (
        select ${columns} from jobs where ${where} order by seq desc
        limit ${opts.pageSize} offset ${(opts.page - 1) * opts.pageSize}
      ) p on true`.execute(this.db);
    return { total: rows[0]?.total ?? 0, rows: rows.filter((r) => r.doc !== null) as unknown as R[] };
  }

  /**
   * Reads the job and its row version, decides, then writes only if the row is still that
   * version, updating job_counts in the same statement. A writer that lost the race reads again
   * and decides on the new state (a transition whose `from` no longer matches then gives up).
   */
  protected async write(id: string, decide: (rec: JobRecord) => JobChange): Promise<JobRecord | undefined> {
    for (let round = 0; round < MAX_WRITE_ROUNDS; round++) {
      const { rows } = await sql<{ doc: string; internal: string; version: string }>`
        select doc, internal, xmin::text as version from jobs where id = ${id}`.execute(this.db);
      const row = rows[0];
      if (!row) return undefined;
      const rec = toRecord(row);
      const change = decide(rec);
      if (!change) return undefined;
      const next = applyChange(rec, change);
      if (await this.compareAndSet(id, row.version, rec, next)) return next;
    }
    throw new Error(`job ${id} kept changing under concurrent writes; gave up after ${MAX_WRITE_ROUNDS} tries`);
  }

  private async compareAndSet(id: string, version: string, prev: JobRecord, next: JobRecord): Promise<boolean> {
    const c = jobColumns(next);
    // Counts move from the old status to the new one; rows in a fixed order so that two writers
    // never lock the same two count rows in opposite orders (a deadlock).
    const moves =
      prev.job.status === next.job.status
        ? []
        : [
            { status: prev.job.status, n: -1 },
            { status: next.job.status, n: 1 },
          ].sort((a, b) => (a.status < b.status ? -1 : 1));
    const counted = moves.length
      ? sql`, counted as (
          insert into job_counts (workspace_id, status, n)
          select upd.workspace_id, m.status, m.n
          from upd
          cross join (values ${sql.join(moves.map((m) => sql`(${m.status}::text, ${m.n}::integer)`))}) as m (status, n)
          on conflict (workspace_id, status) do update set n = job_counts.n + excluded.n)`
      : sql``;
    const { rows } = await sql<{ n: number }>`
      with upd as (
        update jobs set status = ${c.status}, updated_at = ${c.updated_at}, doc = ${c.doc}, internal = ${c.internal},
          preview_key = ${c.preview_key}, delete_after = ${c.delete_after}, output_bytes = ${c.output_bytes}
        where id = ${id} and xmin = ${version}::xid
        returning workspace_id
      )${counted}
      select count(*) as n from upd`.execute(this.db);
    return rows[0]?.n === 1;
  }
}
