// The SQL task queues' reads of what is in the queue (job task lists, counts). A task held while its
// job is paused is queued, as the port sees it: waiting for its turn.
import type { Kysely } from 'kysely';
import { TASK_KINDS, type TaskInfo, type TaskKind, type TaskRun, type TaskState } from '../../ports/tasks.js';
import { framesOf } from '../../domain/task-runs.js';
import type { DB } from './schema.js';

/** The port's state of a stored one. */
const stateOf = (s: string): TaskState => (s === 'paused' ? 'queued' : (s as TaskState));

export async function jobTasks(db: Kysely<DB>, jobId: string): Promise<TaskInfo[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['id', 'kind', 'state', 'attempts', 'last_error'])
    .where('job_id', '=', jobId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind as TaskKind,
    state: stateOf(r.state),
    attempts: r.attempts,
    lastError: r.last_error,
  }));
}

export async function jobTaskRuns(db: Kysely<DB>, jobId: string): Promise<TaskRun[]> {
  const rows = await db
    .selectFrom('tasks')
    .select([
      'id',
      'kind',
      'state',
      'attempts',
      'last_error',
      'payload',
      'worker_id',
      'ran_by',
      'started_at',
      'updated_at',
    ])
    .where('job_id', '=', jobId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => {
    const state = stateOf(r.state);
    return {
      id: r.id,
      kind: r.kind as TaskKind,
      state,
      attempts: r.attempts,
      lastError: r.last_error,
      frames: framesOf(r.payload),
      worker: r.worker_id ?? r.ran_by,
      startedAt: r.started_at,
      // A finished row is written last when it finishes.
      finishedAt: state === 'done' || state === 'failed' || state === 'canceled' ? r.updated_at : null,
    };
  });
}

export async function counts(
  db: Kysely<DB>,
): Promise<{ queued: number; running: number; done: number; failed: number }> {
  const rows = await db
    .selectFrom('tasks')
    .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('state')
    .execute();
  const by = Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  return {
    queued: (by.queued ?? 0) + (by.paused ?? 0),
    running: by.running ?? 0,
    done: by.done ?? 0,
    failed: by.failed ?? 0,
  };
}

export async function countsByKind(db: Kysely<DB>): Promise<Record<TaskKind, { queued: number; running: number }>> {
  const rows = await db
    .selectFrom('tasks')
    .select(['kind', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .where('state', 'in', ['queued', 'running', 'paused'])
    .groupBy(['kind', 'state'])
    .execute();
  const out = Object.fromEntries(TASK_KINDS.map((k) => [k, { queued: 0, running: 0 }])) as Record<
    TaskKind,
    { queued: number; running: number }
  >;
  for (const r of rows) {
    const c = out[r.kind as TaskKind];
    if (c) c[r.state === 'running' ? 'running' : 'queued'] += Number(r.n);
  }
  return out;
}
