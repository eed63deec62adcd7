// Weighted fair share of slot time between groups, for the SQL task queues: start-time fair queuing
// with one virtual tag per task, computed when it is enqueued, so the claim stays one ordered walk of
// an index (task-claim.ts) whatever the backlog.
//
// A task's tag is max(its group's last tag, the queue's virtual time) + cost / weight, and claims go
// by (priority desc, tag, seq). The virtual time is the tag at the head of the kind's queue (what the
// next claim takes): a group that starts waiting starts level with the others, neither owed the time
// it did not use (no burst) nor charged for what others ran before (no starvation behind a backlog).
//
// Shares are of slot SECONDS, not frames: a task's cost is its frames times its group's measured
// seconds per frame (spf). Tags are fixed at enqueue, when a job's whole backlog is tagged, so a
// measurement that moves spf by more than RETAG rescales the group's queued tags around the virtual
// time in one update (rare: once a group's first frames finish, then only when its frames change
// speed), instead of re-tagging on every completion.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { TaskKind } from '../../ports/tasks.js';
import type { DB } from './schema.js';

/** Seconds per frame assumed for a group nothing is measured of yet, when no other group is either. */
const FIRST_SPF = 1;
/** Weight of a new measurement in a group's spf (an exponential moving average). */
const SPF_ALPHA = 0.2;
/**
 * Tags are rescaled once the measured spf is more than this factor off the one they were computed
 * with. The gap left below it is a lasting error of the group's share, hence small: at 1.25 a
 * group of slow frames kept 16% more than its share in bench:schedule.
 */
const RETAG = 1.04;
/**
 * A group's tags are rescaled at most this often (its first measurement excepted), in the queue's
 * clock: a rescale rewrites the group's backlog, and frames whose times scatter moved the average
 * past RETAG every few completions.
 */
const RETAG_EVERY_MS = 30_000;

/** What enqueue stores for a task's place in the order. */
export interface TaskOrder {
  priority: number;
  shareGroup: string;
  tag: number;
  units: number;
}

/** The workspace of a `ws/user` group; null for a group without a submitter part. */
export function parentOf(group: string): string | null {
  const i = group.indexOf('/');
  return i > 0 ? group.slice(0, i) : null;
}

/** The queued task of `kind` the next claim takes, by the claim's order (its dependencies and delay not checked). */
export async function queueHead(
  db: Kysely<DB>,
  kind: TaskKind | string,
): Promise<{ tag: number; priority: number } | undefined> {
  return db
    .selectFrom('tasks')
    .select(['tag', 'priority'])
    .where('state', '=', 'queued')
    .where('kind', '=', kind)
    .orderBy('priority', 'desc')
    .orderBy('tag')
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The queue's virtual time for `kind`: the tag the next claim of that kind takes (not checking its
 * dependencies or retry delay: a cheap index probe). With nothing queued, the largest last tag of
 * any group: every group that starts then starts level.
 */
export async function virtualTime(db: Kysely<DB>, kind: TaskKind | string): Promise<number> {
  const head = await queueHead(db, kind);
  if (head) return head.tag;
  const row = await db
    .selectFrom('share_groups')
    .select((eb) => eb.fn.max('last_tag').as('v'))
    .executeTakeFirst();
  return Number(row?.v ?? 0);
}

/**
 * The weight a group's tasks are tagged with: its own, else (a `ws/user` group) its workspace's
 * divided among the workspace's groups waiting now, so a workspace's submitters share its weight
 * instead of each adding one. Waiting: a last tag ahead of the virtual time.
 */
export async function weightOf(db: Kysely<DB>, group: string, v: number): Promise<number> {
  const parent = parentOf(group);
  const rows = await db
    .selectFrom('share_weights')
    .select(['grp', 'weight'])
    .where('grp', 'in', parent ? [group, parent] : [group])
    .execute();
  const by = new Map(rows.map((r) => [r.grp, r.weight]));
  const own = by.get(group);
  if (own !== undefined) return own;
  if (!parent) return 1;
  const prefix = `${parent}/`;
  const waiting = await db
    .selectFrom('share_groups')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(sql<string>`substr(grp, 1, ${prefix.length})`, '=', prefix)
    .where('grp', '!=', group)
    .where('last_tag', '>', v)
    .executeTakeFirst();
  return (by.get(parent) ?? 1) / (1 + Number(waiting?.n ?? 0));
}

/**
 * The task's place in the order, advancing its group's last tag (call inside enqueue's
 * transaction). The group's row is updated in one statement, so concurrent enqueues of a group
 * each get their own tag.
 */
export async function tagTask(
  trx: Kysely<DB>,
  t: { kind: TaskKind; shareGroup: string; frames: number },
): Promise<number> {
  const v = await virtualTime(trx, t.kind);
  const weight = await weightOf(trx, t.shareGroup, v);
  const units = t.frames / weight;
  const row = await trx
    .insertInto('share_groups')
    .values({
      grp: t.shareGroup,
      last_tag: sql<number>`${v} + ${units} * coalesce((select avg(spf_tag) from share_groups), ${FIRST_SPF})`,
      spf: sql<number>`coalesce((select avg(spf_tag) from share_groups), ${FIRST_SPF})`,
      spf_tag: sql<number>`coalesce((select avg(spf_tag) from share_groups), ${FIRST_SPF})`,
      measured: 0,
      retag_at: 0,
    })
    .onConflict((oc) =>
      oc.column('grp').doUpdateSet({
        last_tag: sql<number>`(case when share_groups.last_tag > ${v} then share_groups.last_tag else ${v} end)
          + ${units} * share_groups.spf_tag`,
      }),
    )
    .returning('last_tag')
    .executeTakeFirstOrThrow();
  return row.last_tag;
}

/**
 * Charges a finished attempt's slot time to its group: the group's spf learns from it, and when it
 * has moved more than RETAG from the spf the queued tags were computed with, they are rescaled.
 * `guessed`: how many groups are still unmeasured (the finish statement reads it, see
 * guessedGroups), so the common case costs one statement here.
 */
export async function chargeTime(
  db: Kysely<DB>,
  t: { kind: string; shareGroup: string; units: number; seconds: number; guessed: number },
  now: number,
): Promise<void> {
  if (t.units <= 0 || !(t.seconds >= 0)) return;
  if (t.guessed > 0) await boundGuesses(db, t.kind, now);
  const row = await db
    .updateTable('share_groups')
    .set(measuredSet(sql<number>`${t.seconds / t.units}`))
    .where('grp', '=', t.shareGroup)
    .returning(['spf', 'spf_tag', 'retag_at'])
    .executeTakeFirst();
  if (row) await retagIfMoved(db, { ...t, ...row }, now);
}

/**
 * What a group's row becomes when a task's seconds per unit (`measured`, an SQL expression) is
 * learnt. The first measurement replaces the guess outright (a group's first frames set its scale)
 * and clears retag_at, so a rescale of the guess does not hold back the rescale to the first measure.
 */
export function measuredSet(measured: RawBuilder<number>) {
  return {
    spf: sql<number>`case when measured = 0 then ${measured} else spf + ${SPF_ALPHA} * (${measured} - spf) end`,
    retag_at: sql<number>`case when measured = 0 then 0 else retag_at end`,
    measured: 1,
  };
}

/**
 * After a charge (`spf`, `spf_tag`, `retag_at`: the group's row as the charge left it): rescales the
 * group's queued tags when its spf moved past RETAG, at most every RETAG_EVERY_MS.
 */
export async function retagIfMoved(
  db: Kysely<DB>,
  g: { kind: string; shareGroup: string; spf: number; spf_tag: number; retag_at: number },
  now: number,
): Promise<void> {
  if (g.spf_tag <= 0) return;
  const ratio = g.spf / g.spf_tag;
  if (ratio <= RETAG && ratio >= 1 / RETAG) return;
  if (now - g.retag_at < RETAG_EVERY_MS) return;
  await rescale(db, g.kind, g.shareGroup, g.spf, now);
}

/** How many groups are unmeasured, as a column of the statement that finishes a task (see chargeTime). */
export const guessedGroups = sql<number>`(select count(*) from share_groups where measured = 0)`;

/**
 * A group none of whose frames has finished yet is tagged with a guess, and its frames have taken
 * at least as long as they have been running: once that passes the guess, its tags are rescaled
 * to it. Without this a group of 40 s frames took every slot freed in the 40 s before its first
 * frame ended (16% over its share in bench:schedule). A query of the few groups, then of the
 * running tasks, and only while a group is unmeasured.
 */
export async function boundGuesses(db: Kysely<DB>, kind: string, now: number): Promise<void> {
  const guessed = await db.selectFrom('share_groups').select(['grp', 'spf_tag']).where('measured', '=', 0).execute();
  if (guessed.length === 0) return;
  const running = await db
    .selectFrom('tasks')
    .select(['share_group', 'started_at', 'units'])
    .where('state', '=', 'running')
    .where(
      'share_group',
      'in',
      guessed.map((g) => g.grp),
    )
    .where('units', '>', 0)
    .execute();
  for (const g of guessed) {
    let bound = 0;
    for (const r of running)
      if (r.share_group === g.grp && r.started_at)
        bound = Math.max(bound, (now - Date.parse(r.started_at)) / 1000 / r.units);
    if (bound <= g.spf_tag * RETAG) continue;
    await db
      .updateTable('share_groups')
      .set({ spf: bound })
      .where('grp', '=', g.grp)
      .where('measured', '=', 0)
      .execute();
    await rescale(db, kind, g.grp, bound, now);
  }
}

/**
 * Rescales the group's queued tags ahead of the virtual time to `spf` (one update, plus its row).
 * In a transaction that first locks the group's row: two completions rescaling one group at once
 * deadlocked on PostgreSQL (their updates took the backlog's rows in different orders); the second
 * now waits, then finds the tags already at (or near) its spf and leaves them.
 */
async function rescale(db: Kysely<DB>, kind: string, group: string, spf: number, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('share_groups')
      .set({ retag_at: now })
      .where('grp', '=', group)
      .returning(['spf_tag'])
      .executeTakeFirst();
    if (!row || row.spf_tag <= 0) return;
    const ratio = spf / row.spf_tag;
    if (ratio <= RETAG && ratio >= 1 / RETAG) return;
    const v = await virtualTime(trx, kind);
    await trx
      .updateTable('tasks')
      .set({ tag: sql<number>`${v} + (tag - ${v}) * ${ratio}` })
      .where('share_group', '=', group)
      .where('state', 'in', ['queued', 'paused'])
      .where('tag', '>', v)
      .execute();
    await trx
      .updateTable('share_groups')
      .set({
        spf_tag: spf,
        last_tag: sql<number>`case when last_tag > ${v} then ${v} + (last_tag - ${v}) * ${ratio} else last_tag end`,
      })
      .where('grp', '=', group)
      .execute();
  });
}

/**
 * After a cancel: the group's last tag comes back to its last queued task (or the virtual time),
 * so a canceled backlog does not push the group's next tasks behind everyone.
 */
export async function settleGroup(db: Kysely<DB>, group: string, kind: string): Promise<void> {
  const [v, row] = await Promise.all([
    virtualTime(db, kind),
    db
      .selectFrom('tasks')
      .select((eb) => eb.fn.max('tag').as('t'))
      .where('share_group', '=', group)
      .where('state', 'in', ['queued', 'paused'])
      .executeTakeFirst(),
  ]);
  const last = row?.t == null ? v : Math.max(Number(row.t), v);
  await db
    .updateTable('share_groups')
    .set({ last_tag: sql<number>`case when last_tag > ${last} then ${last} else last_tag end` })
    .where('grp', '=', group)
    .execute();
}
