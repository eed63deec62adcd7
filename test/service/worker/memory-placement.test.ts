// Memory-aware placement and worker tags: a frame that ran out of memory is retried on a slot with
// more (the CPU's RAM when a GPU was too small), a farm with nothing bigger fails the job with
// OUT_OF_MEMORY, a measured peak keeps small slots off a job while a bigger one is live, CPU slots of
// one machine are not packed past its memory, and tags keep a job to the workers that have them.
// The runtime, queue and job store are the real ones; the handlers stand in for Blender and throw
// what a real run throws (no GPU is lent here; the real cgroup kill is test/e2e/out-of-memory.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlenderCrashError } from '../../../blender/errors.js';
import type { JobRecord } from '../../../service/ports/jobs.js';
import { FatalTaskError } from '../../../service/worker/runtime/outcomes.js';
import type { Slot } from '../../../service/worker/runtime/devices.js';
import { MemoryFit, type FarmSlot } from '../../../service/worker/runtime/memory-fit.js';
import { Placement } from '../../../service/worker/runtime/placement.js';
import type { TaskHandler } from '../../../service/worker/runtime/runtime.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { farmRuntime, stopFarmRuntimesAfterEach, until } from '../../helpers/runtime-farm.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const GiB = 2 ** 30;
let svc: TestService;
beforeAll(async () => (svc = await startTestService()));
afterAll(() => svc.close());
stopFarmRuntimesAfterEach();

/** A worker with one render slot of `slot`'s kind and memory, on the test service's queue. */
function worker(
  name: string,
  slot: Slot,
  handler: TaskHandler,
  farm: FarmSlot[],
  oomKills?: () => number,
  tags: string[] = [],
) {
  const { jobs, queue } = svc.service.ports;
  const fit = new MemoryFit({
    machineMemoryBytes: 64 * GiB,
    tags,
    farmSlots: async () => farm,
    farmCacheMs: 0,
    notice: async (jobId, reason) =>
      void (await jobs.update(jobId, { placement: reason ? { reason, since: new Date().toISOString() } : null })),
  });
  return farmRuntime(svc, {
    name,
    handler,
    placement: new Placement({ queue, builds: [], fit }),
    lane: { name: slot.id, slot },
    deps: { memory: { fit, ownSlots: [slot.memoryBytes] }, ...(oomKills ? { oomKills: () => oomKills() } : {}) },
  });
}

const gpuSlot: Slot = { id: 'gpu-GPU-1', kind: 'gpu', gpuUuids: ['GPU-1'], memoryBytes: 8 * GiB };
const cpuSlot: Slot = { id: 'cpu-0', kind: 'cpu', gpuUuids: [], memoryBytes: 64 * GiB };

async function jobWithTask(payload: Record<string, unknown> = {}): Promise<{ jobId: string; taskId: string }> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  const taskId = `mem-${job.id}`;
  await svc.service.ports.queue.enqueue({ id: taskId, jobId: job.id, kind: 'render-chunk', payload });
  return { jobId: job.id, taskId };
}

describe('out of memory', () => {
  it('a frame too big for the GPU (Cycles says so) is retried on the CPU slot, which has more memory', async () => {
    const { jobId } = await jobWithTask({ index: 0 });
    const { jobs, queue } = svc.service.ports;
    const farm = [
      { memoryBytes: 8 * GiB, tags: [] },
      { memoryBytes: 64 * GiB, tags: [] },
    ];
    const ran: string[] = [];
    // What the render handler throws when Blender printed Cycles' error line at frame 7.
    const gpu = worker(
      'gpu-box',
      gpuSlot,
      async () => {
        ran.push('gpu');
        throw FatalTaskError.render('BLENDER_FAILED', 'Blender failed at frame 7: System is out of GPU memory', {
          lastFrame: 7,
          lastLines: ['Fra:7 Mem:310.00M (Peak 7900.00M) | Time:00:03.10 | Mem:7950.00M, Peak:7950.00M | Scene'],
          errors: ['System is out of GPU memory'],
        });
      },
      farm,
    );
    gpu.start();
    await until(async () => (await jobs.getById(jobId))?.internal.memory?.outOfMemoryAboveBytes !== undefined);
    const cpu = worker('cpu-box', cpuSlot, async () => void ran.push('cpu'), farm);
    cpu.start();
    await until(async () => (await queue.jobTasks(jobId))[0]?.state === 'done');
    // Once on the GPU, never again there (its 8 GiB proved too small), then on the CPU.
    expect(ran).toEqual(['gpu', 'cpu']);
    expect((await jobs.getById(jobId))?.internal.memory).toMatchObject({
      outOfMemoryAboveBytes: 8 * GiB,
      lastOutOfMemory: { frame: 7, slot: 'gpu-box/gpu-GPU-1', peakBytes: 7950 * 2 ** 20 },
    });
    expect((await jobs.getById(jobId))?.job.status).not.toBe('failed');
  });

  it('with no slot bigger than the one the kernel killed a frame in, the job fails with OUT_OF_MEMORY', async () => {
    const { jobId } = await jobWithTask({ index: 0 });
    const { jobs } = svc.service.ports;
    let kills = 0;
    const small = worker(
      'small',
      { ...cpuSlot, memoryBytes: 4 * GiB },
      async () => {
        // The cgroup counts the kill; Blender died of SIGKILL with its last progress line.
        kills++;
        throw new BlenderCrashError('Blender crashed (SIGKILL)', {
          signal: 'SIGKILL',
          exitCode: null,
          lastFrame: 3,
          lastLines: ['Fra:3 Mem:2100.00M (Peak 3900.00M) | Time:00:09.00 | Scene, ViewLayer | Synchronizing'],
        });
      },
      [{ memoryBytes: 4 * GiB, tags: [] }],
      () => kills,
    );
    small.start();
    await until(async () => (await jobs.getById(jobId))?.job.status === 'failed');
    const reason = (await jobs.getById(jobId))?.job.failedReason;
    expect(reason).toMatchObject({
      name: 'OUT_OF_MEMORY',
      type: 'RENDER_FAILED',
      errorDetails: { frame: 3, peakBytes: 4 * GiB, slotMemoryBytes: 4 * GiB, largestSlotBytes: 4 * GiB },
    });
    expect(reason?.errorDetails.message).toBe(
      'Frame 3 ran out of memory: it was killed by the kernel at a peak of 4.0 GiB in a slot of 4.0 GiB, and the ' +
        'largest live slot on the farm has 4.0 GiB. Render it on a worker with more memory (add one, or raise its ' +
        '--slot-memory), or make the frame lighter (resolution, subdivision levels, texture sizes, Simplify), then ' +
        'requeue the job.',
    );
  });

  it('a SIGKILL the cgroup did not count is a crash like any other, not out of memory', async () => {
    const { jobId } = await jobWithTask({ index: 0 });
    const { jobs, queue } = svc.service.ports;
    let runs = 0;
    const w = worker(
      'w',
      cpuSlot,
      async () => {
        if (++runs === 1)
          throw new BlenderCrashError('Blender crashed (SIGKILL)', { signal: 'SIGKILL', lastLines: [] });
      },
      [],
      () => 0,
    );
    w.start();
    await until(async () => (await queue.jobTasks(jobId))[0]?.state === 'done');
    expect(runs).toBe(2);
    expect((await jobs.getById(jobId))?.internal.memory).toBeUndefined();
  });
});

describe('worker tags', () => {
  it('a job requiring a tag no live worker has says so while it waits, and runs once such a worker joins', async () => {
    const { jobId } = await jobWithTask({ index: 0 });
    const { jobs, queue } = svc.service.ports;
    await jobs.update(jobId, { scheduling: { ...scheduling, requiredTags: ['site:paris'] } });
    // The registry as the workers read it: live slots with their worker's tags.
    const farm: FarmSlot[] = [{ memoryBytes: 64 * GiB, tags: ['site:london'] }];
    const ran: string[] = [];
    worker('london', cpuSlot, async () => void ran.push('london'), farm, undefined, ['site:london']).start();
    await until(async () => (await jobs.getById(jobId))?.job.placement?.reason === 'no live worker has tag site:paris');
    farm.push({ memoryBytes: 64 * GiB, tags: ['site:paris', 'gpu:a4000'] });
    worker('paris', cpuSlot, async () => void ran.push('paris'), farm, undefined, ['site:paris', 'gpu:a4000']).start();
    await until(async () => (await queue.jobTasks(jobId))[0]?.state === 'done');
    expect(ran).toEqual(['paris']);
    // The notice went once a worker could take the job.
    expect((await jobs.getById(jobId))?.job.placement ?? null).toBeNull();
  });
});

const scheduling = { priority: 50, paused: false, dependsOn: [], waitingFor: [], previewFrames: false, previews: null };

describe('memory need and tags (MemoryFit)', () => {
  const job = (memory?: JobRecord['internal']['memory'], requiredTags?: string[]): JobRecord =>
    ({
      job: { id: 'j', ...(requiredTags ? { scheduling: { requiredTags } } : {}) },
      internal: { sourceKey: 'k', fileType: 'blend', ...(memory ? { memory } : {}) },
    }) as unknown as JobRecord;
  // A frame peaked at 10 GiB: the need is 10 x 1.2 + 0.25 = 12.25 GiB.
  const peaked = job({ peakBytes: 10 * GiB });

  it('a measured peak keeps a slot too small off the job while a bigger one is live, not when none is', async () => {
    const withBig = new MemoryFit({
      machineMemoryBytes: 64 * GiB,
      farmSlots: async () => [{ memoryBytes: 32 * GiB, tags: [] }],
    });
    expect(await withBig.refusal(peaked, 'w/cpu-0', { memoryBytes: 8 * GiB, kind: 'cpu' })).toBe(
      'its frames need about 12.3 GiB (peak plus margin); this slot has 8.0 GiB',
    );
    expect(await withBig.refusal(peaked, 'w/cpu-0', { memoryBytes: 16 * GiB, kind: 'cpu' })).toBeUndefined();
    // Nothing bigger is live: the estimate alone does not starve the job.
    const alone = new MemoryFit({
      machineMemoryBytes: 64 * GiB,
      farmSlots: async () => [{ memoryBytes: 8 * GiB, tags: [] }],
    });
    expect(await alone.refusal(peaked, 'w/cpu-0', { memoryBytes: 8 * GiB, kind: 'cpu' })).toBeUndefined();
  });

  it("CPU slots sharing a machine's memory do not start a frame past it; GPU slots count their own", async () => {
    const fit = new MemoryFit({ machineMemoryBytes: 20 * GiB });
    const facts = { memoryBytes: 20 * GiB, kind: 'cpu' as const };
    expect(await fit.refusal(peaked, 'w/cpu-0', facts)).toBeUndefined();
    const release = fit.hold(peaked, 'w/cpu-0', facts);
    expect(await fit.refusal(peaked, 'w/cpu-1', facts)).toBe(
      "its frames need about 12.3 GiB; this machine's other slots hold 12.3 GiB of its 20.0 GiB now",
    );
    // The slot already holding it may take its next frame (a warm slot queues one behind the running one).
    expect(await fit.refusal(peaked, 'w/cpu-0', facts)).toBeUndefined();
    expect(await fit.refusal(peaked, 'w/gpu-1', { memoryBytes: 24 * GiB, kind: 'gpu' })).toBeUndefined();
    release();
    expect(await fit.refusal(peaked, 'w/cpu-1', facts)).toBeUndefined();
  });

  it('a job requiring tags goes only to a worker with every one of them', async () => {
    const paris = new MemoryFit({ machineMemoryBytes: 64 * GiB, tags: ['site:paris', 'gpu:a4000'] });
    const london = new MemoryFit({ machineMemoryBytes: 64 * GiB, tags: ['site:london', 'gpu:a4000'] });
    const untagged = new MemoryFit({ machineMemoryBytes: 64 * GiB });
    const wants = job(undefined, ['site:paris', 'gpu:a4000']);
    expect(await paris.refusal(wants, 'p/cpu-0', {})).toBeUndefined();
    expect(await london.refusal(wants, 'l/cpu-0', {})).toBe(
      'needs worker tag site:paris; this worker has site:london, gpu:a4000',
    );
    expect(await untagged.refusal(wants, 'u/cpu-0', {})).toBe(
      'needs worker tag site:paris, gpu:a4000; this worker has no tags',
    );
    // A job requiring nothing runs anywhere.
    expect(await london.refusal(job(), 'l/cpu-0', {})).toBeUndefined();
  });
});
