// How fast a planned render's tasks go into each queue: one enqueue() per task, against one batch
// (domain/enqueue-all.ts: TaskSubmitter.enqueueMany where the adapter has it), on a fresh queue
// holding another group's backlog. Prints tasks per second; not part of bench:schedule's table.
// Remote and Remote-BullMQ: a remote worker's queue (RemoteTaskQueue, through the worker API over
// HTTP) of a service in this process on SQLite, or on BullMQ (the test Redis); jobs are real ones.
// Usage: npx tsx bench/schedule-enqueue.ts [--engines SQLite,PostgreSQL,BullMQ,Remote,Remote-BullMQ]
//   [--tasks 2000] [--jobs 3]
import { randomBytes } from 'node:crypto';
import { enqueueAll } from '../service/domain/enqueue-all.js';
import type { EnqueueTask, TaskQueue } from '../service/ports/tasks.js';
import { RemoteTaskQueue } from '../service/worker-api/remote-queue.js';
import { createJob } from '../test/helpers/flow.js';
import { api } from '../test/helpers/http.js';
import { TEST_REDIS_URL, deletePrefix } from '../test/helpers/redis.js';
import { startTestService } from '../test/helpers/service.js';
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

const REMOTE = ['Remote', 'Remote-BullMQ'] as const;
type Engine = ScheduleEngine | (typeof REMOTE)[number];

interface BenchQueue {
  queue: Pick<TaskQueue, 'enqueue' | 'enqueueMany'>;
  /** A job id for `label`: the label, or on a remote queue a job created in the service. */
  job(label: string): Promise<string>;
  close(): Promise<void>;
}

async function openRemote(engine: (typeof REMOTE)[number]): Promise<BenchQueue> {
  const token = randomBytes(32).toString('base64url');
  const prefix = `rbbench-${randomBytes(5).toString('hex')}`;
  const onBull = engine === 'Remote-BullMQ' ? { redisUrl: TEST_REDIS_URL, queuePrefix: prefix } : {};
  const svc = await startTestService({ workerToken: token, workerApiRateLimitMax: 10_000_000, ...onBull });
  const call = api(svc.baseUrl, svc.apiKey);
  return {
    queue: new RemoteTaskQueue({ serviceUrls: [svc.origin], token }),
    job: async () => (await createJob(call)).id,
    close: async () => {
      await svc.close();
      if (engine === 'Remote-BullMQ') await deletePrefix(prefix, TEST_REDIS_URL);
    },
  };
}

async function open(engine: Engine): Promise<BenchQueue> {
  if ((REMOTE as readonly string[]).includes(engine)) return openRemote(engine as (typeof REMOTE)[number]);
  const q = await openClockedQueue(engine as ScheduleEngine, Date.now);
  return { ...q, job: async (label) => label };
}

async function rate(engine: Engine, batched: boolean): Promise<number> {
  const { queue, job, close } = await open(engine);
  try {
    for (const t of plan(await job('backlog'), 500)) await queue.enqueue(t);
    const ids = [];
    for (let j = 0; j < JOBS; j++) ids.push(await job(`job${j}`));
    const jobs = ids.map((id) => plan(id, Math.round(TASKS / JOBS)));
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

for (const engine of (arg('engines')?.split(',') ?? [...SCHEDULE_ENGINES, ...REMOTE]) as Engine[]) {
  const needs = engine === 'Remote-BullMQ' ? 'BullMQ' : engine === 'Remote' ? 'SQLite' : engine;
  const missing = await scheduleEngineMissing(needs);
  if (missing) {
    console.log(`${engine}: not run (${missing})`);
    continue;
  }
  const one = await rate(engine, false);
  const many = await rate(engine, true);
  console.log(`${engine}: one by one ${one.toFixed(0)} tasks/s, batched ${many.toFixed(0)} tasks/s`);
}
process.exit(0);
