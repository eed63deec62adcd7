// How fast a planned render's tasks go into each queue: one enqueue() per task, against one batch
// (domain/enqueue-all.ts: TaskSubmitter.enqueueMany where the adapter has it), on a fresh queue
// holding another group's backlog. Prints tasks per second; not part of bench:schedule's table.
// Usage: npx tsx bench/schedule-enqueue.ts [--engines SQLite,PostgreSQL,BullMQ] [--tasks 2000] [--jobs 3]
import { enqueueAll } from '../service/domain/enqueue-all.js';
import type { EnqueueTask } from '../service/ports/tasks.js';
import { SCHEDULE_ENGINES, openClockedQueue, scheduleEngineMissing, type ScheduleEngine } from './schedule-engines.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const TASKS = Number(arg('tasks') ?? 2000);
const JOBS = Number(arg('jobs') ?? 3);

/** A job as the planner enqueues it: `n` one-frame chunks, then a finalize after them. */
function plan(jobId: string, n: number): EnqueueTask[] {
  const o = { jobId, shareGroup: `ws-${jobId}/artist`, priority: 50 };
  const chunks = Array.from({ length: n }, (_, i) => ({
    id: `${jobId}:chunk:${i}`,
    kind: 'render-chunk' as const,
    payload: { frames: [i + 1] },
    ...o,
  }));
  return [...chunks, { id: `${jobId}:finalize`, kind: 'finalize', after: chunks.map((c) => c.id), ...o }];
}

async function rate(engine: ScheduleEngine, batched: boolean): Promise<number> {
  const { queue, close } = await openClockedQueue(engine, Date.now);
  try {
    for (const t of plan('backlog', 500)) await queue.enqueue(t);
    const jobs = Array.from({ length: JOBS }, (_, j) => plan(`job${j}`, Math.round(TASKS / JOBS)));
    const t0 = performance.now();
    for (const tasks of jobs) {
      if (batched) await enqueueAll(queue, tasks);
      else for (const t of tasks) await queue.enqueue(t);
    }
    const n = jobs.reduce((a, j) => a + j.length, 0);
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await close();
  }
}

for (const engine of (arg('engines')?.split(',') ?? [...SCHEDULE_ENGINES]) as ScheduleEngine[]) {
  const missing = await scheduleEngineMissing(engine);
  if (missing) {
    console.log(`${engine}: not run (${missing})`);
    continue;
  }
  const one = await rate(engine, false);
  const many = await rate(engine, true);
  console.log(`${engine}: one by one ${one.toFixed(0)} tasks/s, batched ${many.toFixed(0)} tasks/s`);
}
process.exit(0);
