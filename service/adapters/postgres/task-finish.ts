// Ending a task's attempt on PostgreSQL in one statement: the task's row and its fair-share group's
// measured seconds per frame are updated together (data-modifying CTEs), where the shared SQL path
// (../sql/task-queue.ts, for SQLite too) takes two. Every statement is a round trip and a commit,
// and the completion is half of a farm's queue traffic: bench:schedule's throughput row measures it.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../sql/schema.js';
import type { FinishSet } from '../sql/task-queue.js';
import { PREPARED } from './prepared.js';
import { boundGuesses, measuredSet, retagIfMoved } from '../sql/share-tags.js';

interface Finished {
  kind: string;
  share_group: string;
  /** The group's row after the charge; null when nothing was charged (no frames, never started). */
  spf: number | null;
  spf_tag: number | null;
  retag_at: number | null;
  guessed: number;
}

/** SqlTaskQueue.finish in one statement (only the lease holder's call changes anything). */
export async function finishPg(
  db: Kysely<DB>,
  taskId: string,
  workerId: string,
  set: FinishSet,
  now: number,
): Promise<void> {
  const iso = new Date(now).toISOString();
  const runAfter = set.run_after === undefined ? sql`run_after` : sql`${set.run_after}`;
  // Seconds per unit of the attempt: started_at is stored as ISO 8601 text.
  const measured = sql<number>`((${now} - extract(epoch from f.started_at::timestamptz) * 1000) / 1000.0 / f.units)`;
  const m = measuredSet(measured);
  const { rows } = await sql<Finished>`${sql.raw(PREPARED)}
    with f as (
      update tasks set state = ${set.state}, last_error = ${set.last_error}, run_after = ${runAfter},
        worker_id = null, lease_until = null, updated_at = ${iso}
      where id = ${taskId} and worker_id = ${workerId} and state = 'running'
      returning kind, share_group, units, started_at
    ), g as (
      update share_groups set spf = ${m.spf}, retag_at = ${m.retag_at}, measured = 1
      from f
      where share_groups.grp = f.share_group and f.units > 0 and f.started_at is not null
        and ${now} >= extract(epoch from f.started_at::timestamptz) * 1000
      returning share_groups.spf, share_groups.spf_tag, share_groups.retag_at
    )
    select f.kind, f.share_group, g.spf, g.spf_tag, g.retag_at,
      (select count(*) from share_groups where measured = 0)::int as guessed
    from f left join g on true`.execute(db);
  const r = rows[0];
  if (!r || r.spf === null) return;
  // The snapshot the statement read still counts this group when this was its first measurement.
  if (r.guessed > 0) await boundGuesses(db, r.kind, now);
  await retagIfMoved(
    db,
    { kind: r.kind, shareGroup: r.share_group, spf: r.spf, spf_tag: r.spf_tag!, retag_at: r.retag_at! },
    now,
  );
}
