// Placement: a worker slot that keeps failing one job's tasks is kept off that job, so the
// others finish it; a task that just failed on a slot goes to another slot first; tasks planned
// for a Blender version go only to workers that have it.
// The runtime, queue and job store are the real ones; the handlers stand in for Blender.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../../service/ports/tasks.js';
import type { BlenderBuild } from '../../../blender/builds.js';
import { RetryableTaskError } from '../../../service/worker/runtime/outcomes.js';
import { Placement } from '../../../service/worker/runtime/placement.js';
import type { TaskHandler, WorkerRuntime } from '../../../service/worker/runtime/runtime.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { farmRuntime, stopFarmRuntimesAfterEach, until } from '../../helpers/runtime-farm.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => (svc = await startTestService()));
afterAll(() => svc.close());
stopFarmRuntimesAfterEach();

const build = (major: number, minor: number): BlenderBuild =>
  ({
    binary: `/opt/blender-${major}.${minor}/blender`,
    version: { major, minor, patch: 1, text: `${major}.${minor}.1` },
    isDefault: false,
  }) as BlenderBuild;

/** A worker runtime on the test service's queue; with `lines`, its log lines (JSON) are kept there. */
function runtime(
  name: string,
  builds: BlenderBuild[],
  handler: TaskHandler,
  threshold = 2,
  memoryGiB = 64,
  lines?: string[],
): WorkerRuntime {
  const placement = new Placement(
    { queue: svc.service.ports.queue, builds },
    { blocklistThreshold: threshold, totalMemoryBytes: memoryGiB * 2 ** 30 },
  );
  const log = lines ? pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }) : undefined;
  return farmRuntime(svc, { name, handler, placement, deps: log ? { log } : {}, options: { maxAttempts: 5 } });
}

/**
 * Waits until the worker logging to `lines` has left task `taskId` for another worker twice: the
 * event that proves it had the task in hand and refused it, and (the second time) that its first
 * release went through. Returns the refusal it logged.
 */
async function refusedTwice(lines: string[], taskId: string): Promise<string> {
  const refusals = () =>
    lines
      .map((l) => JSON.parse(l) as { msg: string; taskId?: string; refusal?: string })
      .filter((l) => l.msg === 'task left for another worker' && l.taskId === taskId);
  await until(async () => refusals().length >= 2);
  return refusals()[0]!.refusal!;
}

describe('placement', () => {
  it('keeps a failing slot off the job after the threshold; the healthy worker renders the rest', async () => {
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    const { queue } = svc.service.ports;
    for (let i = 0; i < 6; i++)
      await queue.enqueue({ id: `bl-${job.id}-${i}`, jobId: job.id, kind: 'render-chunk', payload: { index: i } });
    const ranBy = new Map<string, string>();
    const broken = runtime('broken-gpu', [], async () => {
      throw new RetryableTaskError('CUDA error: illegal address');
    });
    // The healthy worker joins a moment later, so the broken one gets to fail first.
    broken.start();
    await until(async () => ((await queue.jobFailures(job.id))['broken-gpu/cpu'] ?? 0) >= 2);
    const healthy = runtime('healthy', [], async (task: Task) => void ranBy.set(task.id, 'healthy'));
    healthy.start();
    await until(async () => (await queue.jobTasks(job.id)).every((t) => t.state === 'done'));
    await Promise.all([broken.stop(), healthy.stop()]);
    expect(ranBy.size).toBe(6);
    // Blocked at 2 failures: it never took another of this job's tasks.
    expect(await queue.jobFailures(job.id)).toEqual({ 'broken-gpu/cpu': 2 });
  });

  it('hands a task planned for Blender 4.1 only to a worker that has 4.1', async () => {
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    const { queue } = svc.service.ports;
    await queue.enqueue({
      id: `v-${job.id}`,
      jobId: job.id,
      kind: 'render-chunk',
      payload: { requires: { blender: '4.1' } },
    });
    const seen: string[] = [];
    const lines: string[] = [];
    const old = runtime('old', [build(3, 6)], async () => void seen.push('old'), 2, 64, lines);
    old.start();
    // The old worker took the task in hand and left it, twice, without running it.
    expect(await refusedTwice(lines, `v-${job.id}`)).toBe('needs Blender 4.1; this worker has 3.6');
    expect(seen).toEqual([]);
    // Handed back each time without counting an attempt (running only for a moment while refused).
    await until(async () => (await queue.jobTasks(job.id))[0]?.state === 'queued');
    expect((await queue.jobTasks(job.id))[0]).toMatchObject({ attempts: 0 });
    const fresh = runtime('fresh', [build(3, 6), build(4, 1)], async () => void seen.push('fresh'));
    fresh.start();
    await until(async () => (await queue.jobTasks(job.id))[0]?.state === 'done');
    await Promise.all([old.stop(), fresh.stop()]);
    expect(seen).toEqual(['fresh']);
  });

  it(
    'a validation handed on for a file of 5.2 is left by workers whose builds cannot open it, and taken by one ' +
      'that can',
    async () => {
      const job = await createJob(api(svc.baseUrl, svc.apiKey));
      const task: Task = {
        id: `validate:${job.id}:opens-5_2`,
        jobId: job.id,
        kind: 'validate',
        payload: { requires: { opens: '5.2' } },
        attempts: 1,
      };
      const old = new Placement({ queue: svc.service.ports.queue, builds: [build(3, 4), build(4, 3)] });
      expect(await old.refusal(task, 'old/control')).toBe(
        'needs a Blender that opens files of 5.2; this worker has 3.4, 4.3',
      );
      expect(
        await new Placement({ queue: svc.service.ports.queue, builds: [build(5, 2)] }).refusal(task, 'new/control'),
      ).toBeUndefined();
      // A newer major opens it as well (the worker then routes among its own builds).
      expect(
        await new Placement({ queue: svc.service.ports.queue, builds: [build(6, 0)] }).refusal(task, 'newer/control'),
      ).toBeUndefined();
    },
  );

  it('leaves a task that just failed on a slot once for another slot, runs it there if nobody took it', async () => {
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    const placement = new Placement({ queue: svc.service.ports.queue, builds: [] }, { blocklistThreshold: 5 });
    const task: Task = { id: `f-${job.id}`, jobId: job.id, kind: 'render-chunk', payload: {}, attempts: 1 };
    expect(await placement.refusal(task, 'w/cpu-0')).toBeUndefined();
    await placement.failed(task, 'w/cpu-0');
    // Any other slot takes the retry at once.
    expect(await placement.refusal({ ...task, attempts: 2 }, 'w/cpu-1')).toBeUndefined();
    // The slot it failed on leaves it once...
    expect(await placement.refusal({ ...task, attempts: 2 }, 'w/cpu-0')).toMatch(/failed on this slot/);
    // ...and runs it the next time: a farm of one slot still finishes the job.
    expect(await placement.refusal({ ...task, attempts: 2 }, 'w/cpu-0')).toBeUndefined();
    // Its failure counts for the per-job blocklist as before.
    expect(await svc.service.ports.queue.jobFailures(job.id)).toEqual({ 'w/cpu-0': 1 });
  });

  it('leaves a job that needs more memory (minimumRam) to a machine that has it', async () => {
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    const { queue } = svc.service.ports;
    await queue.enqueue({
      id: `m-${job.id}`,
      jobId: job.id,
      kind: 'render-chunk',
      payload: { requires: { minimumRamGiB: 32 } },
    });
    const seen: string[] = [];
    const lines: string[] = [];
    const small = runtime('small', [], async () => void seen.push('small'), 2, 16, lines);
    small.start();
    // The small machine took the task in hand and left it, twice, without running it.
    expect(await refusedTwice(lines, `m-${job.id}`)).toBe('needs 32 GiB of memory; this machine has 16.0 GiB');
    expect(seen).toEqual([]);
    const big = runtime('big', [], async () => void seen.push('big'), 2, 64);
    big.start();
    await until(async () => (await queue.jobTasks(job.id))[0]?.state === 'done');
    await Promise.all([small.stop(), big.stop()]);
    expect(seen).toEqual(['big']);
  });
});
