// The placement notice for builds: a task routed to a Blender version (or to "a build that opens
// files of 9.0", as a worker that cannot see the farm hands it on) that no live worker has says so on
// its job, as a required tag nobody has does; a worker with the build joining clears it. Real
// service ports (job store, queue, worker registry); the workers are the registry's reports, the
// same rows a remote worker's heartbeat through the worker API writes, and placement is this
// worker's, wired as service/worker/start.ts wires it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlenderBuild } from '../../../blender/builds.js';
import { liveSlotFacts } from '../../../service/domain/workers.js';
import type { Task } from '../../../service/ports/tasks.js';
import { MemoryFit } from '../../../service/worker/runtime/memory-fit.js';
import { Placement } from '../../../service/worker/runtime/placement.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let placement: Placement;

const build = (major: number, minor: number): BlenderBuild => ({
  binary: `/opt/blender-${major}.${minor}/blender`,
  version: { major, minor, patch: 0, text: `${major}.${minor}.0` },
  isDefault: true,
});

/** A live worker in the registry with one CPU slot, these builds and tags. */
async function worker(name: string, versions: string[], tags: string[] = []): Promise<void> {
  await svc.service.ports.workers!.registry.report({
    id: `${name}:1`,
    name,
    hostname: name,
    version: 'test',
    startedAt: new Date().toISOString(),
    state: 'running',
    heartbeatIntervalMs: 60_000,
    slots: [
      { id: 'cpu-0', device: { kind: 'cpu', name: 'CPU', uuid: null }, state: 'idle', tasks: [], warmJobId: null },
    ],
    builds: versions.map((version) => ({ version, path: `/opt/${version}`, kind: 'release' as const })),
    gpus: [],
    blocklistedBy: [],
    ...(tags.length ? { tags } : {}),
  });
}

beforeAll(async () => {
  svc = await startTestService();
  const { jobs, queue, workers } = svc.service.ports;
  const fit = new MemoryFit({
    machineMemoryBytes: 8 * 2 ** 30,
    // No cache: each refusal reads the registry as it is now.
    farmCacheMs: 0,
    farmSlots: async () => liveSlotFacts(await workers!.registry.listWorkers(), Date.now()),
    notice: async (jobId, reason) =>
      void (await jobs.update(jobId, { placement: reason ? { reason, since: new Date().toISOString() } : null })),
  });
  placement = new Placement({ queue, builds: [build(4, 2)], fit });
  await worker('here', ['4.2.1']);
});
afterAll(() => svc?.close());

async function refuse(requires: Record<string, string>, scheduling?: { requiredTags: string[] }) {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  if (scheduling) {
    const rec = (await svc.service.ports.jobs.getById(job.id))!;
    await svc.service.ports.jobs.update(job.id, { scheduling: { ...rec.job.scheduling!, ...scheduling } });
  }
  const task: Task = {
    id: `chunk:${job.id}:0`,
    jobId: job.id,
    kind: 'render-chunk',
    payload: { requires },
    attempts: 1,
  };
  const at = async () => {
    const rec = (await svc.service.ports.jobs.getById(job.id))!;
    return { rec, refusal: await placement.refusal(task, 'cpu-0', { kind: 'cpu', job: rec }) };
  };
  const placementOf = async () => (await svc.service.ports.jobs.getById(job.id))?.job.placement?.reason ?? null;
  return { at, placementOf };
}

describe('the placement notice for Blender builds', () => {
  it('says no live worker has the version a task needs, and clears it once one joins', async () => {
    const { at, placementOf } = await refuse({ blender: '9.9' });
    expect((await at()).refusal).toBe('needs Blender 9.9; this worker has 4.2');
    expect(await placementOf()).toBe('no live worker has Blender 9.9');
    await worker('remote-1', ['9.9.0']);
    // This worker still leaves the task; the farm now has the build, so the notice goes.
    expect((await at()).refusal).toBe('needs Blender 9.9; this worker has 4.2');
    expect(await placementOf()).toBeNull();
  });

  it('says no live worker opens the file, for a task handed on by a worker that could not see the farm', async () => {
    const { at, placementOf } = await refuse({ opens: '12.0' });
    expect((await at()).refusal).toMatch(/^needs a Blender that opens files of 12.0/);
    expect(await placementOf()).toBe('no live worker has a Blender that opens files of 12.0');
  });

  it("counts only the workers with the job's required tags", async () => {
    const { at, placementOf } = await refuse({ blender: '9.9' }, { requiredTags: ['site:paris'] });
    await at();
    expect(await placementOf()).toBe('no live worker with its tags has Blender 9.9');
    await worker('remote-paris', ['9.9.1'], ['site:paris']);
    await at();
    expect(await placementOf()).toBeNull();
  });
});
