// The placement notice from a worker on another machine (extension scheduling): "a job that no live
// worker can ever take says so while queued". A remote worker reads the farm through the internal
// worker API (GET /workers/live, RemoteFarm) and writes the notice through it (RemoteWorkerJobs),
// with its placement wired as service/worker/start.ts wires it; the workers are heartbeats through
// the worker API. The farm it reads shows slots, tags and builds, never what other workers run.
import { describe, expect, it } from 'vitest';
import type { BlenderBuild } from '../../../blender/builds.js';
import { initialScheduling } from '../../../service/domain/scheduling.js';
import { liveSlotFacts } from '../../../service/domain/workers.js';
import type { Task } from '../../../service/ports/tasks.js';
import type { WorkerReport } from '../../../service/ports/workers.js';
import { RemoteFarm } from '../../../service/worker-api/remote-farm.js';
import { RemoteWorkerReporter } from '../../../service/worker-api/remote-reporter.js';
import { MemoryFit } from '../../../service/worker/runtime/memory-fit.js';
import { Placement } from '../../../service/worker/runtime/placement.js';
import { createJob } from '../../helpers/flow.js';
import { TOKEN, workerApiHarness } from './worker-api-harness.js';

const h = workerApiHarness();

const BUILD: BlenderBuild = {
  binary: '/opt/blender-4.2/blender',
  version: { major: 4, minor: 2, patch: 1, text: '4.2.1' },
  isDefault: true,
};

/** A heartbeat of a live worker with one CPU slot, through the worker API; `runs`: a job its slot renders. */
async function heartbeat(name: string, tags: string[], runs?: string): Promise<void> {
  const startedAt = new Date().toISOString();
  const report: WorkerReport = {
    id: `${name}:1`,
    name,
    hostname: name,
    version: 'test',
    startedAt,
    state: 'running',
    heartbeatIntervalMs: 60_000,
    slots: [
      {
        id: 'cpu-0',
        device: { kind: 'cpu', name: 'CPU', uuid: null },
        state: runs ? 'busy' : 'idle',
        tasks: runs ? [{ jobId: runs, taskId: `chunk:${runs}:0`, kind: 'render-chunk', frames: [1], startedAt }] : [],
        warmJobId: null,
        memoryBytes: 4 * 2 ** 30,
      },
    ],
    builds: [{ version: '4.2.1', path: '/opt/blender-4.2/blender', kind: 'release' }],
    gpus: [],
    blocklistedBy: [],
    ...(tags.length ? { tags } : {}),
  };
  await new RemoteWorkerReporter({ serviceUrls: [h.svc.origin], token: TOKEN }).report(report);
}

describe('the placement notice from a remote worker', () => {
  it('says no live worker has the tag a queued job needs, and clears it once one joins', async () => {
    const farm = new RemoteFarm({ serviceUrls: [h.svc.origin], token: TOKEN });
    const jobs = h.jobs;
    const fit = new MemoryFit({
      machineMemoryBytes: 8 * 2 ** 30,
      // No cache: each refusal reads the farm as it is now.
      farmCacheMs: 0,
      farmSlots: async () => liveSlotFacts(await farm.listWorkers(), Date.now()),
      notice: async (jobId, reason) =>
        void (await jobs.update(jobId, { placement: reason ? { reason, since: new Date().toISOString() } : null })),
    });
    const placement = new Placement({ queue: h.svc.service.ports.queue, builds: [BUILD], fit });

    const busy = await createJob(h.call);
    await heartbeat('remote-a', [], busy.id);
    const job = await createJob(h.call);
    const scheduling = initialScheduling({ requiredTags: ['site:paris'] }, []);
    await h.svc.service.ports.jobs.update(job.id, { scheduling });
    const task: Task = { id: `chunk:${job.id}:0`, jobId: job.id, kind: 'render-chunk', payload: {}, attempts: 1 };
    const leave = async () => {
      const rec = (await jobs.getById(job.id))!;
      return placement.refusal(task, 'cpu-0', { kind: 'cpu', memoryBytes: 4 * 2 ** 30, job: rec });
    };

    // The farm the remote worker reads: the live slot, its memory and build, not the job it runs.
    const seen = await farm.listWorkers();
    expect(liveSlotFacts(seen, Date.now())).toEqual([
      { memoryBytes: 4 * 2 ** 30, tags: [], builds: [expect.objectContaining({ major: 4, minor: 2 })] },
    ]);
    expect(JSON.stringify(await h.internal('GET', '/workers/live'))).not.toContain(busy.id);

    expect(await leave()).toMatch(/site:paris/);
    expect((await h.publicJob(job.id)).placement?.reason).toBe('no live worker has tag site:paris');

    await heartbeat('remote-paris', ['site:paris']);
    // This worker still leaves the job's frames (it lacks the tag); the farm now has a worker that can.
    expect(await leave()).toMatch(/site:paris/);
    expect((await h.publicJob(job.id)).placement ?? null).toBeNull();
  });

  it('is refused without a worker token', async () => {
    const r = await h.internal('GET', '/workers/live', undefined, { token: null });
    expect(r.status).toBe(401);
  });
});
