// Batched enqueue for the SQL task queues (TaskSubmitter.enqueueMany): the outcome of SqlTaskQueue's
// enqueue called once per task, in order (the same rows, priorities, fair-share tags and seq order),
// in a few statements per batch instead of about six per task. The tags are what one enqueue after
// another would compute: a run of tasks of one kind and group takes its first tag as enqueue does
// (share-tags.ts tagTask); the next ones follow from it, because from the second task on the queue's
// virtual time no longer moves within the run (the run's first task is the head of the queue, or the
// head stays where it was) and each tag starts from the one before. Runs whose tasks are held (a
// paused job), where the virtual time still moves with them, are tagged task by task.
import type { Kysely } from 'kysely';
import type { EnqueueTask, TaskKind } from '../../ports/tasks.js';
import type { DB } from './schema.js';
import { queueHead, tagTask, weightOf } from './share-tags.js';
import { jobSched, newTaskRow, type JobSched, type NewTaskRow } from './task-schedule.js';

/** Tasks per transaction: bounds a batch's statement size and how long it holds its locks. */
export const ENQUEUE_BATCH = 1000;

/** A task's row as the batch inserts it (the columns that vary; the rest are as enqueue sets them). */
export interface TaskRow extends NewTaskRow {
  tag: number;
}

/** Inserts `rows` in their order (seq follows it), skipping ids already there; the ids it inserted. */
export type InsertTasks = (
  trx: Kysely<DB>,
  rows: readonly TaskRow[],
  at: { runAfter: number; ts: string },
) => Promise<string[]>;

/** The portable insert: multi-row VALUES, a few hundred rows a statement (SQLite's bound on variables). */
export const insertValues: InsertTasks = async (trx, rows, at) => {
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const added = await trx
      .insertInto('tasks')
      .values(
        rows.slice(i, i + 500).map((r) => ({
          ...r,
          attempts: 0,
          run_after: at.runAfter,
          worker_id: null,
          lease_until: null,
          last_error: null,
          created_at: at.ts,
          updated_at: at.ts,
        })),
      )
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    ids.push(...added.map((a) => a.id));
  }
  return ids;
};

interface Item {
  t: EnqueueTask;
  row: Omit<TaskRow, 'tag'>;
}

/**
 * Enqueues `tasks` (any number, ENQUEUE_BATCH per transaction) as SqlTaskQueue.enqueue would one by
 * one; the kinds that got a claimable task, for the caller's ready signal once committed.
 */
export async function enqueueMany(
  db: Kysely<DB>,
  now: () => number,
  tasks: readonly EnqueueTask[],
  insert: InsertTasks,
): Promise<Set<TaskKind>> {
  const claimable = new Set<TaskKind>();
  for (let i = 0; i < tasks.length; i += ENQUEUE_BATCH) {
    const batch = tasks.slice(i, i + ENQUEUE_BATCH);
    const kinds = await db.transaction().execute((trx) => enqueueBatch(trx, now(), batch, insert));
    for (const k of kinds) claimable.add(k);
  }
  return claimable;
}

async function enqueueBatch(
  trx: Kysely<DB>,
  now: number,
  tasks: readonly EnqueueTask[],
  insert: InsertTasks,
): Promise<TaskKind[]> {
  const items = await newItems(trx, tasks);
  const at = { runAfter: now, ts: new Date(now).toISOString() };
  const inserted = new Set<string>();
  let pending: TaskRow[] = [];
  const flush = async () => {
    for (const id of await insert(trx, pending, at)) inserted.add(id);
    pending = [];
  };
  for (let i = 0; i < items.length;) {
    const first = items[i]!.row;
    let end = i + 1;
    while (end < items.length && sameRun(items[end]!.row, first)) end++;
    // The virtual time reads the queued tasks of the kind: those of an earlier run must be in.
    if (pending.some((r) => r.kind === first.kind)) await flush();
    const tags = await runTags(trx, items.slice(i, end));
    items.slice(i, end).forEach((it, k) => pending.push({ ...it.row, tag: tags[k]! }));
    i = end;
  }
  await flush();
  const deps = items.flatMap((it) =>
    inserted.has(it.t.id) ? (it.t.after ?? []).map((dep) => ({ task_id: it.t.id, dep_id: dep })) : [],
  );
  for (let i = 0; i < deps.length; i += 1000)
    await trx
      .insertInto('task_deps')
      .values(deps.slice(i, i + 1000))
      .onConflict((oc) => oc.doNothing())
      .execute();
  const kinds = items.filter((it) => inserted.has(it.t.id) && it.row.state === 'queued' && !it.t.after?.length);
  return [...new Set(kinds.map((it) => it.t.kind))];
}

function sameRun(a: Omit<TaskRow, 'tag'>, b: Omit<TaskRow, 'tag'>): boolean {
  return a.kind === b.kind && a.share_group === b.share_group && a.state === b.state && a.priority === b.priority;
}

/**
 * The tasks not in the queue yet (nor earlier in the batch), each with its job's scheduling, read as
 * enqueue reads it (task-schedule.ts jobSched: once per job and distinct priority and group named).
 */
async function newItems(trx: Kysely<DB>, tasks: readonly EnqueueTask[]): Promise<Item[]> {
  const there = new Set<string>();
  const ids = [...new Set(tasks.map((t) => t.id))];
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await trx
      .selectFrom('tasks')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 1000))
      .execute();
    for (const r of rows) there.add(r.id);
  }
  const scheds = new Map<string, JobSched>();
  const items: Item[] = [];
  for (const t of tasks) {
    if (there.has(t.id)) continue;
    there.add(t.id);
    const key = JSON.stringify([t.jobId, t.priority ?? null, t.shareGroup ?? null]);
    let job = scheds.get(key);
    if (!job) scheds.set(key, (job = await jobSched(trx, t)));
    items.push({ t, row: newTaskRow(t, job) });
  }
  return items;
}

/**
 * The tags of a run (one kind, group, state and priority), advancing the group's last tag as the
 * run's enqueues one by one would.
 */
async function runTags(trx: Kysely<DB>, run: readonly Item[]): Promise<number[]> {
  const { kind, share_group: group, state, priority } = run[0]!.row;
  const tagOf = (it: Item) => tagTask(trx, { kind: it.t.kind, shareGroup: group, frames: it.row.units });
  if (state !== 'queued' || run.length === 1) {
    const tags: number[] = [];
    for (const it of run) tags.push(await tagOf(it));
    return tags;
  }
  const head = await queueHead(trx, kind);
  const first = await tagOf(run[0]!);
  // The virtual time once the first is queued: the first itself when it goes ahead of the head
  // (claimed before it: a higher priority, or an earlier tag; a tie goes to the older task).
  const ahead = !head || priority > head.priority || (priority === head.priority && first < head.tag);
  const v = ahead ? first : head.tag;
  const weight = await weightOf(trx, group, v);
  const row = await trx.selectFrom('share_groups').select('spf_tag').where('grp', '=', group).executeTakeFirstOrThrow();
  // The same arithmetic as tagTask's statement, in the same doubles: max(last tag, v) + units * spf.
  const tags = [first];
  for (const it of run.slice(1)) tags.push(Math.max(tags.at(-1)!, v) + (it.row.units / weight) * row.spf_tag);
  await trx
    .updateTable('share_groups')
    .set({ last_tag: tags.at(-1)! })
    .where('grp', '=', group)
    .execute();
  return tags;
}
