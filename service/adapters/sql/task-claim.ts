import { CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Task, TaskKind } from '../../ports/tasks.js';
import { claimable, ready } from './claimable.js';
import type { DB } from './schema.js';

type ClaimedRow = Pick<DB['tasks'], 'id' | 'job_id' | 'kind' | 'payload' | 'attempts'>;

/**
 * Values no call passes, standing in the compiled claim for each call's own (a worker id, the
 * time): replaced by identity, so no real parameter can be taken for one.
 */
const SLOT = {
  worker: '\u0000rb-claim-worker',
  nowIso: '\u0000rb-claim-now',
  now: -918_273_645_001,
  leaseUntil: -918_273_645_002,
} as const;

/** A sub-select that picks one candidate task for a claim (its id and place in the claim order). */
export type ClaimPick = SelectQueryBuilder<DB, 'tasks', { id: string; seq: number; priority: number; tag: number }>;

/** The engine's lock on a pick (SqlTaskQueue.lockPick), so one task never goes to two claimers. */
export type LockPick = (pick: ClaimPick) => ClaimPick;

/** A claimed task as the port returns it. */
function toTask(row: ClaimedRow): Task {
  return {
    id: row.id,
    jobId: row.job_id,
    kind: row.kind as TaskKind,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    attempts: row.attempts,
  };
}

/** The durable task queue's claim, shared by the SQLite and PostgreSQL adapters. */
export class TaskClaim {
  /** The claim's statement per kinds list, built once: building it with Kysely cost more than running it. */
  private readonly statements = new Map<string, CompiledQuery>();

  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => number,
    private readonly lockPick: LockPick,
  ) {}

  /**
   * One statement: lease the first ready task in the claim order, (priority desc, tag, seq):
   * strict priority, then the fair share between groups (the tag, ./share-tags.ts), then enqueue
   * order. Engines differ only in how a pick is locked (`lockPick`), so one task never goes to two
   * claimers.
   */
  async claim(workerId: string, kinds: readonly TaskKind[], leaseMs: number): Promise<Task | undefined> {
    if (kinds.length === 0) return undefined;
    const key = kinds.join(',');
    let statement = this.statements.get(key);
    if (!statement) {
      statement = this.claimQuery(kinds).compile();
      this.statements.set(key, statement);
    }
    const now = this.now();
    const values = new Map<unknown, unknown>([
      [SLOT.worker, workerId],
      [SLOT.now, now],
      [SLOT.leaseUntil, now + leaseMs],
      [SLOT.nowIso, new Date(now).toISOString()],
    ]);
    const parameters = statement.parameters.map((p) => (values.has(p) ? values.get(p) : p));
    // Marked for PostgreSQL to prepare once per connection (../postgres/prepared.ts); a comment elsewhere.
    const text = `/* rb:prepared */ ${statement.sql}`;
    const { rows } = await this.db.executeQuery<ClaimedRow>(CompiledQuery.raw(text, parameters));
    return rows[0] && toTask(rows[0]);
  }

  /** The claim with placeholders (SLOT) where each call's values go. */
  private claimQuery(kinds: readonly TaskKind[]) {
    return this.db
      .updateTable('tasks')
      .set((eb) => ({
        state: 'running',
        worker_id: SLOT.worker,
        lease_until: SLOT.leaseUntil,
        updated_at: SLOT.nowIso,
        attempts: eb('attempts', '+', 1),
        // Kept once the task ends, for the job-tasks route (worker_id is the live lease).
        started_at: SLOT.nowIso,
        ran_by: SLOT.worker,
      }))
      .where('id', '=', (eb) =>
        eb
          .selectFrom(this.candidates(kinds, SLOT.now).as('c'))
          .select('c.id')
          .orderBy('c.priority', 'desc')
          .orderBy('c.tag')
          .orderBy('c.seq')
          .limit(1),
      )
      .returning(['id', 'job_id', 'kind', 'payload', 'attempts']);
  }

  /**
   * The first claimable task of each kind, and the first whose lease ran out: each one an ordered
   * walk of an index (tasks_order: state, kind, priority desc, tag, seq) that stops at its first
   * match, so a claim costs the same with ten tasks queued or a hundred thousand (one sorted query
   * over all of them grew with the backlog). Tasks of a paused job are not queued (state 'paused');
   * one whose lease ran out while its job is paused waits for the resume.
   */
  private candidates(kinds: readonly TaskKind[], now: number) {
    const tasks = () => ready(this.db.selectFrom('tasks'));
    const first = (q: ReturnType<typeof tasks>) => {
      const pick: ClaimPick = q
        .select(['id', 'seq', 'priority', 'tag'])
        .orderBy('priority', 'desc')
        .orderBy('tag')
        .orderBy('seq')
        .limit(1);
      return this.db.selectFrom(this.lockPick(pick).as('k')).select(['k.id', 'k.seq', 'k.priority', 'k.tag']);
    };
    const lapsed = first(
      tasks()
        .where('state', '=', 'running')
        .where('lease_until', '<', now)
        .where('kind', 'in', kinds)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('job_sched')
                .select('job_sched.job_id')
                .whereRef('job_sched.job_id', '=', 'tasks.job_id')
                .where('job_sched.paused', '=', 1),
            ),
          ),
        ),
    );
    return kinds
      .map((kind) => first(claimable(this.db.selectFrom('tasks'), kind, now)))
      .reduce((all, q) => all.unionAll(q), lapsed);
  }
}
