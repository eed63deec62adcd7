// The QueueOrder reads (service/ports/queue-order.ts) for the SQLite and PostgreSQL queues: counts
// over the tasks in the claim order of task-claim.ts (priority desc, tag, seq). Frame-rendering
// tasks are those with units (frames) above 0, whatever their kind: they share the render slots.
import { sql, type Kysely } from 'kysely';
import type { GroupQueueLoad, QueueAheadCounts } from '../../ports/queue-order.js';
import type { DB } from './schema.js';

export async function queueAhead(db: Kysely<DB>, jobId: string): Promise<QueueAheadCounts | null> {
  const head = await db
    .selectFrom('tasks')
    .select(['priority', 'tag', 'seq'])
    .where('job_id', '=', jobId)
    .where('state', '=', 'queued')
    .where('units', '>', 0)
    .orderBy('priority', 'desc')
    .orderBy('tag')
    .orderBy('seq')
    .limit(1)
    .executeTakeFirst();
  if (!head) return null;
  const row = await db
    .selectFrom('tasks')
    .select((eb) => [
      eb.fn.countAll<number>().as('tasks'),
      eb.fn.sum<number>('units').as('frames'),
      sql<number>`count(distinct job_id)`.as('jobs'),
    ])
    .where('state', '=', 'queued')
    .where('units', '>', 0)
    .where('job_id', '!=', jobId)
    .where((eb) =>
      eb.or([
        eb('priority', '>', head.priority),
        eb.and([eb('priority', '=', head.priority), eb('tag', '<', head.tag)]),
        eb.and([eb('priority', '=', head.priority), eb('tag', '=', head.tag), eb('seq', '<', head.seq)]),
      ]),
    )
    .executeTakeFirst();
  return { tasks: Number(row?.tasks ?? 0), frames: Number(row?.frames ?? 0), jobs: Number(row?.jobs ?? 0) };
}

export async function groupLoads(db: Kysely<DB>): Promise<GroupQueueLoad[]> {
  const [waiting, measured] = await Promise.all([
    db
      .selectFrom('tasks')
      .select((eb) => [
        'share_group',
        'state',
        eb.fn.sum<number>('units').as('frames'),
        sql<number>`count(distinct job_id)`.as('jobs'),
      ])
      .where('state', 'in', ['queued', 'paused'])
      .where('units', '>', 0)
      .groupBy(['share_group', 'state'])
      .execute(),
    db.selectFrom('share_groups').select(['grp', 'spf']).where('measured', '=', 1).execute(),
  ]);
  const out = new Map<string, GroupQueueLoad>();
  const of = (group: string) => {
    let g = out.get(group);
    if (!g) out.set(group, (g = { group, waitingFrames: 0, waitingJobs: 0, pausedFrames: 0, secondsPerFrame: null }));
    return g;
  };
  for (const r of waiting) {
    const g = of(r.share_group);
    if (r.state === 'paused') g.pausedFrames += Number(r.frames);
    else {
      g.waitingFrames += Number(r.frames);
      g.waitingJobs += Number(r.jobs);
    }
  }
  for (const m of measured) of(m.grp).secondsPerFrame = Number(m.spf);
  return [...out.values()];
}
