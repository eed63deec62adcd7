// GET /jobs/{id}/estimate against the farm as the worker registry knows it (extension estimate):
// no GPU is lent to the test machines, so the GPU case runs here, the test playing the workers
// (registry reports, the estimate's samples written through the ports as a worker writes them).
// Also: what a remote worker sends of an estimate passes the worker API's strict check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EstimateEnvelope } from '../../../shared/api/estimate.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { WorkerInternalWire } from '../../../service/worker-api/internal-state.js';
import type { EstimateInternal } from '../../../service/domain/estimate-state.js';
import type { WorkerSlotReport } from '../../../service/ports/workers.js';
import { createJob, type Call } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const GiB = 2 ** 30;
let svc: TestService;
let call: Call;

beforeAll(async () => {
  svc = await startTestService({ estimateRates: 'CPU=0.36,GPU=3.6' });
  call = api(svc.baseUrl, svc.apiKey);
  await reportFarm();
});
afterAll(() => svc.close());

/** The test's one worker: GPU slot a free, b busy, a CPU slot; `a` changes slot a (a warm Blender, a task). */
async function reportFarm(a: Partial<WorkerSlotReport> = {}): Promise<void> {
  const gpuSlot = (uuid: string, state: WorkerSlotReport['state']): WorkerSlotReport => ({
    id: `gpu-${uuid}`,
    device: { kind: 'gpu', name: 'RTX', uuid },
    state,
    tasks: [],
    warmJobId: null,
  });
  await svc.service.ports.workers!.registry.report({
    id: 'gpu-box:1',
    name: 'gpu-box',
    hostname: 'gpu-box',
    version: 'test',
    startedAt: new Date().toISOString(),
    state: 'running',
    heartbeatIntervalMs: 60_000,
    slots: [
      { ...gpuSlot('a', 'idle'), ...a },
      gpuSlot('b', 'busy'),
      { id: 'cpu-0', device: { kind: 'cpu', name: 'CPU', uuid: null }, state: 'idle', tasks: [], warmJobId: null },
    ],
    builds: [{ version: '4.2.3', path: '/b', kind: 'release' }],
    gpus: [
      { name: 'RTX', uuid: 'a', memoryMiB: 8192 },
      { name: 'RTX', uuid: 'b', memoryMiB: 8192 },
    ],
    blocklistedBy: [],
  });
}

/** A validated job whose estimate sampled frames 1, 12 and 24 of 1-24 on OPTIX, each peaking at `peak`. */
async function sampledOnGpu(peak: number): Promise<string> {
  const job = await createJob(call);
  for (const [from, to] of [
    ['created', 'validating'],
    ['validating', 'validated'],
  ] as const)
    await svc.service.ports.jobs.transition(job.id, [from], to);
  const at = new Date().toISOString();
  const estimate: EstimateInternal = {
    requestedConfig: { colorManagementPreset: 'default', frameRanges: ['1-24'], computeDeviceType: 'OPTIX' },
    state: 'ready',
    startedAt: at,
    finishedAt: at,
    frames: [1, 12, 24],
    frameRanges: ['1-24'],
    samples: [1, 12, 24].map((frame) => ({ frame, seconds: 4, peakMemoryBytes: peak, device: 'OPTIX' })),
    loadSeconds: [3, 3, 3],
    // Every measurement the worker saves (these two were once refused from a remote worker).
    warmupSeconds: [1],
    prepareSeconds: [0.5],
    outputBytes: [2e6, 2e6, 2e6],
    ownSeconds: 21,
    ownNormalizedSeconds: 105,
    blenderVersion: '4.2',
  };
  // What a worker on another machine would send passes the worker API's check.
  expect(WorkerInternalWire.safeParse({ estimate }).success).toBe(true);
  await svc.service.ports.jobs.update(job.id, {}, { estimate });
  return job.id;
}

describe('estimate against the farm', () => {
  it('is listed by GET /extensions with its three routes', async () => {
    const list = ExtensionList.parse((await call('GET', '/extensions')).body).data.extensions;
    expect(list.find((e) => e.name === 'estimate')).toMatchObject({
      version: 1,
      routes: ['startEstimate', 'getEstimate', 'cancelEstimate'],
    });
  });

  it("says a peak above the GPUs' memory does not fit the GPU slots; spreads frames over the free ones", async () => {
    const id = await sampledOnGpu(11 * GiB);
    const { data } = EstimateEnvelope.parse((await call('GET', `/jobs/${id}/estimate`)).body);
    const f = data.figures!;
    expect(f.device).toBe('OPTIX');
    expect(f.memory.slots).toEqual([
      { kind: 'gpu', capacityBytes: 8 * GiB, slots: 2, fits: 'no' },
      { kind: 'cpu', capacityBytes: null, slots: 1, fits: 'unknown' },
    ]);
    expect(f.memory.summary).toContain('does not fit the 8 GB GPU slots');
    expect(data.warnings).toContain(
      'The peak memory does not fit the GPU slots the samples rendered on: the render would fail for memory there.',
    );
    // 21 frames left at 4 s on the one free GPU slot, after 0.5 s fetching the project, a 3 s load
    // and a 1 s warm-up.
    expect(f.renderSeconds.value).toBeCloseTo(84, 0);
    expect(f.wallSeconds.value).toBeCloseTo(88.5, 0);
    expect(f.normalizedSeconds.value).toBeCloseTo(84 * 5, 0);
    expect(f.cost!.value).toBeCloseTo(0.08, 2);
    expect(data.ownCost).toEqual({ renderSeconds: 21, normalizedSeconds: 105, cost: 0.02 });
  });

  it("says a peak well below the GPUs' memory fits them", async () => {
    const id = await sampledOnGpu(2 * GiB);
    const f = EstimateEnvelope.parse((await call('GET', `/jobs/${id}/estimate`)).body).data.figures!;
    expect(f.memory.slots[0]).toMatchObject({ kind: 'gpu', fits: 'yes' });
    expect(f.memory.summary).toContain('fits the 8 GB GPU slots');
  });

  it("counts no load while the free slot holds the estimate's Blender, and the load once it is gone", async () => {
    const id = await sampledOnGpu(2 * GiB);
    const wall = async () => {
      const { data } = EstimateEnvelope.parse((await call('GET', `/jobs/${id}/estimate`)).body);
      return { wall: data.figures!.wallSeconds.value, warnings: data.warnings };
    };
    try {
      // 84 s of frames on the one free GPU slot, which holds the job's Blender: no 0.5 s fetch, 3 s load, 1 s warm-up.
      await reportFarm({ warmJobId: id });
      const warm = await wall();
      expect(warm.wall).toBeCloseTo(84, 0);
      expect(warm.warnings.some((w) => w.includes('counts no scene load') && w.includes('120 s'))).toBe(true);
      // A report a heartbeat old still shows the estimate's own task on it: free for the render all the same.
      const task = { jobId: id, taskId: `estimate:${id}:1`, kind: 'render-chunk' as const, frames: null };
      await reportFarm({ warmJobId: id, state: 'busy', tasks: [{ ...task, startedAt: new Date().toISOString() }] });
      expect((await wall()).wall).toBeCloseTo(84, 0);
      // Another job's warm Blender there: the load as before.
      await reportFarm({ warmJobId: 'another-job' });
      expect((await wall()).wall).toBeCloseTo(88.5, 0);
      // Past the keep time (120 s) the Blender is gone, whatever a late report still says.
      await reportFarm({ warmJobId: id });
      const rec = (await svc.service.ports.jobs.getById(id))!;
      const long = new Date(Date.now() - 200_000).toISOString();
      await svc.service.ports.jobs.update(id, {}, { estimate: { ...rec.internal.estimate!, finishedAt: long } });
      const gone = await wall();
      expect(gone.wall).toBeCloseTo(88.5, 0);
      expect(gone.warnings.some((w) => w.includes('counts no scene load'))).toBe(false);
    } finally {
      await reportFarm();
    }
  });

  it('replays a failed estimate until it is set aside, then starts again', async () => {
    const job = await createJob(call);
    for (const [from, to] of [
      ['created', 'validating'],
      ['validating', 'validated'],
    ] as const)
      await svc.service.ports.jobs.transition(job.id, [from], to);
    const body = { requestedRenderConfig: { colorManagementPreset: 'default' } };
    const first = EstimateEnvelope.parse((await call('POST', `/jobs/${job.id}/estimate`, body)).body).data;
    const reason = 'No worker has a Blender that opens files of 9.9.';
    const rec = (await svc.service.ports.jobs.getById(job.id))!;
    await svc.service.ports.jobs.update(
      job.id,
      {},
      { estimate: { ...rec.internal.estimate!, state: 'failed', reason, finishedAt: new Date().toISOString() } },
    );
    const replay = await call('POST', `/jobs/${job.id}/estimate`, body);
    expect(replay.status).toBe(200);
    expect(EstimateEnvelope.parse(replay.body).data).toMatchObject({
      state: 'failed',
      reason,
      startedAt: first.startedAt,
      figures: null,
    });
    const aside = EstimateEnvelope.parse((await call('DELETE', `/jobs/${job.id}/estimate`)).body).data;
    expect(aside).toMatchObject({ state: 'canceled', reason });
    const again = await call('POST', `/jobs/${job.id}/estimate`, body);
    expect(again.status).toBe(202);
    expect(EstimateEnvelope.parse(again.body).data).toMatchObject({ state: 'sampling', reason: null });
  });
});
