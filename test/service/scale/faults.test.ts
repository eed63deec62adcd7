// Faults of a scaled-out farm, with real processes: a service, three workers (each with its own
// work folder, as on its own machine) on PostgreSQL, Redis (BullMQ) and S3, rendering a 12-frame
// job one frame per task. A worker killed mid-frame, a Redis restart mid-job, and a service
// instance killed mid-render must each still end with the job completed and every frame exactly
// once in its downloads.
import { afterEach, describe, expect, it } from 'vitest';
import { BullmqTaskQueue } from '../../../service/adapters/bullmq/task-queue.js';
import type { TaskInfo } from '../../../service/ports/tasks.js';
import { taskIds } from '../../../service/domain/tasks.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import type { RenderJobClient } from '../../../shared/client/client.js';
import { fetchBytes, tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { pngInfo } from '../../helpers/png.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { requireRedis, requireRedisServer, startThrowawayRedis, type ThrowawayRedis } from '../../helpers/redis.js';
import type { FarmProcess } from './farm-process.js';
import { startFarm, type Farm } from './farm.js';
import { blenderPresent } from '../../helpers/blender-present.js';

const FRAMES = Array.from({ length: 12 }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`);
const LEASE_SECONDS = 3;

const pgUp = await requirePostgres('the farm fault tests');
const redisUrl = await requireRedis('the farm fault tests');
const canSpawnRedis = requireRedisServer('the Redis restart farm test');
const blender = blenderPresent('the farm fault tests');
// The Redis restart test runs on its own redis-server, not on the shared one.
const canRender = pgUp && blender;

/** Everything a test started, torn down after it whatever happened. */
const teardown: (() => Promise<void>)[] = [];
let farm: Farm | undefined;

afterEach(async (ctx) => {
  if (farm && ctx.task.result?.state === 'fail') console.error(`farm logs of "${ctx.task.name}":\n${farm.report()}`);
  farm = undefined;
  const errors: unknown[] = [];
  for (const t of teardown.splice(0).reverse()) await t().catch((e: unknown) => errors.push(e));
  if (errors.length) throw new AggregateError(errors, 'tearing down the farm failed');
});

async function farmOn(url: string, services = 1): Promise<Farm> {
  const f = await startFarm({ redisUrl: url, services, workers: 3, leaseSeconds: LEASE_SECONDS });
  teardown.push(() => f.close());
  farm = f;
  return f;
}

async function queueOn(url: string, prefix: string): Promise<BullmqTaskQueue> {
  const q = await BullmqTaskQueue.open({ redisUrl: url, prefix });
  teardown.push(() => q.close());
  return q;
}

/** Uploads the basic fixture, validates it and starts a tiny render of frames 1-12; returns the job id. */
async function startTwelveFrames(client: RenderJobClient): Promise<string> {
  const target = await client.uploadProject(await buildFixture('basic'));
  const job = await client.createJob({ slug: target.slug });
  await client.validateJob(job.id, {});
  const validated = await client.waitForStatus(job.id, ['validated', 'failed', 'canceled'], {
    intervalMs: 200,
    timeoutMs: 90_000,
  });
  expect(validated.status).toBe('validated');
  // One chunk a frame, chunk i = frame i + 1: no preview chunks first (extension scheduling).
  await client.renderJob(job.id, { ...tinyRender('1-12'), scheduling: { previewFrames: false } });
  return job.id;
}

/** Waits until one of `workers` is rendering a frame of the job (its Blender runs); returns it and the frame. */
async function midFrame(
  client: RenderJobClient,
  id: string,
  workers: readonly FarmProcess[],
): Promise<{ worker: FarmProcess; frame: number }> {
  return waitUntil(
    'a worker to be rendering a frame',
    async () => {
      for (const worker of workers) {
        const r = worker.renders()[0];
        if (r) return { worker, frame: r.frame };
      }
      const { status } = await client.getJob(id);
      if (status !== 'booting' && status !== 'rendering')
        throw new Error(`the job is ${status} before any worker was caught rendering`);
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
}

/** What a user checks: the job completed, and its downloads list each frame once, each a 64x48 PNG. */
async function expectEveryFrameOnce(client: RenderJobClient, id: string): Promise<void> {
  const done = await client.waitForStatus(id, ['completed', 'failed', 'canceled'], {
    intervalMs: 250,
    timeoutMs: 150_000,
  });
  expect(done.failedReason ?? null).toBeNull();
  expect(done.status).toBe('completed');
  const downloads = await client.getDownloads(id);
  const names = (downloads.frameOutputs ?? []).map((f) => f.fileName);
  expect([...names].sort()).toEqual(FRAMES);
  expect(downloads.frames).toHaveLength(12);
  expect(new Set(downloads.frames).size).toBe(12);
  for (const url of downloads.frames) {
    const png = pngInfo(await fetchBytes(url));
    expect([png.width, png.height]).toEqual([64, 48]);
  }
}

/**
 * The job's tasks once the queue has settled them (the job is completed just before its
 * finalize task is marked done), or as they are after 15 s.
 */
async function settledTasks(queue: BullmqTaskQueue, id: string): Promise<TaskInfo[]> {
  const until = Date.now() + 15_000;
  for (;;) {
    const tasks = await queue.jobTasks(id);
    if (Date.now() > until || tasks.every((t) => t.state !== 'queued' && t.state !== 'running')) return tasks;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every planned chunk (one per frame) and the job's other tasks ran to the end; none is missing, none was dropped. */
async function expectAllTasksDone(queue: BullmqTaskQueue, id: string): Promise<TaskInfo[]> {
  const tasks = await settledTasks(queue, id);
  const chunks = tasks.filter((t) => t.kind === 'render-chunk');
  expect(chunks.map((t) => t.id).sort()).toEqual(FRAMES.map((_, i) => taskIds.chunk(id, i)).sort());
  expect(chunks.filter((t) => t.state !== 'done')).toEqual([]);
  expect(tasks.filter((t) => t.kind !== 'render-chunk').map((t) => [t.kind, t.state])).toEqual([
    ['validate', 'done'],
    ['render', 'done'],
    ['finalize', 'done'],
  ]);
  return tasks;
}

describe.skipIf(!canRender || redisUrl === undefined)('a farm of one service and three workers', () => {
  it(
    'kill -9 of a worker mid-frame: its task goes back to the queue after the lease, and the job completes ' +
      'with every frame once',
    async () => {
      const f = await farmOn(redisUrl!);
      const queue = await queueOn(redisUrl!, f.prefix);
      const { client } = f.services[0]!;
      const id = await startTwelveFrames(client);

      const { worker: victim, frame } = await midFrame(client, id, f.workers);
      const taskId = taskIds.chunk(id, frame - 1);
      const killedAt = Date.now();
      await victim.kill();
      expect(victim.renders()).toEqual([]);

      // The survivors take the dead worker's task once its lease has run out.
      const retried = await waitUntil(
        `${taskId} to be claimed again`,
        async () => (await queue.jobTasks(id)).find((t) => t.id === taskId && t.attempts >= 2),
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      const backAfterMs = Date.now() - killedAt;
      expect(retried.attempts).toBeGreaterThanOrEqual(2);
      expect(backAfterMs).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000 - 500);
      // Lease plus the time a surviving worker needs to finish the frame it was on.
      expect(backAfterMs).toBeLessThan(45_000);

      await expectEveryFrameOnce(client, id);
      const tasks = await expectAllTasksDone(queue, id);
      expect(tasks.find((t) => t.id === taskId)?.attempts).toBeGreaterThanOrEqual(2);
      expect(victim.alive).toBe(false);
    },
    240_000,
  );

  it('two service instances: kill -9 of the one workers report to, mid-render; the other finishes it', async () => {
    const f = await farmOn(redisUrl!, 2);
    const [first, second] = f.services as [Farm['services'][0], Farm['services'][0]];
    // The job is created and watched through the instance that survives; workers report to the first one first.
    const id = await startTwelveFrames(second.client);
    await midFrame(second.client, id, f.workers);
    const jobRoutes = `${WORKER_API_PREFIX}/jobs/${id}`;
    expect(first.proc.logged(jobRoutes), 'the workers were reporting to the first instance').toBe(true);
    const secondBefore = second.proc.lines.length;
    await first.proc.kill();

    await expectEveryFrameOnce(second.client, id);
    expect(first.proc.alive).toBe(false);
    // The rest of the job's state went through the survivor's worker API. Its request log is
    // written asynchronously, so the line may follow the job's completion by a moment.
    await waitUntil(
      'the survivor to log the completion report',
      () => second.proc.lines.slice(secondBefore).some((l) => l.includes(`${jobRoutes}/completed`)),
      { timeoutMs: 10_000 },
    );
    await expectAllTasksDone(await queueOn(redisUrl!, f.prefix), id);
  }, 240_000);
});

describe.skipIf(!canRender || !canSpawnRedis)('a farm on a Redis that restarts', () => {
  it('a Redis restart mid-job (kill -9, append-only file) loses no task: the job has every frame once', async () => {
    const redis: ThrowawayRedis = await startThrowawayRedis();
    teardown.push(() => redis.stop());
    const f = await farmOn(redis.url);
    const { client } = f.services[0]!;
    const id = await startTwelveFrames(client);

    const queue = await queueOn(redis.url, f.prefix);
    // Restarted once the plan is in Redis (12 chunks, the finalize) and a chunk is rendering.
    const before = await waitUntil(
      'the render to be planned and a chunk to be running',
      async () => {
        const tasks = await queue.jobTasks(id);
        return (
          tasks.some((t) => t.kind === 'finalize') &&
          tasks.some((t) => t.kind === 'render-chunk' && t.state === 'running') &&
          tasks
        );
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    await midFrame(client, id, f.workers);
    await redis.restart('kill');

    await expectEveryFrameOnce(client, id);
    const after = await expectAllTasksDone(queue, id);
    // What Redis held before the restart is all still there: the 12 chunks and the finalize were planned already.
    expect(before.filter((t) => t.kind === 'render-chunk')).toHaveLength(12);
    expect(after.map((t) => t.id)).toEqual(expect.arrayContaining(before.map((t) => t.id)));
  }, 240_000);
});
