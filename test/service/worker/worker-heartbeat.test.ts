// A worker's heartbeat as GET /workers shows it: a real runtime, queue, placement and the
// service's worker registry (the handlers stand in for Blender). A slot holding a task shows it
// busy with the task at once (not at the next period), idle once it ends; a slot the per-job
// blocklist keeps off a job lists that job, to its workspace only; a worker that stops says so.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerList } from '../../../shared/api/workers.js';
import { LaneActivity } from '../../../service/worker/runtime/activity.js';
import { WorkerHeartbeat } from '../../../service/worker/runtime/heartbeat.js';
import { RetryableTaskError } from '../../../service/worker/runtime/outcomes.js';
import { Placement } from '../../../service/worker/runtime/placement.js';
import { WorkerRuntime, type Lane } from '../../../service/worker/runtime/runtime.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
let rivalKey: string;
beforeAll(async () => {
  svc = await startTestService();
  rivalKey = await svc.createApiKey('rival');
});
afterAll(() => svc.close());

async function workers(key = svc.apiKey): Promise<WorkerList['data']['workers']> {
  const a = await api(svc.baseUrl, key)<WorkerList>('GET', '/workers');
  expect(a.status).toBe(200);
  return a.body.data.workers;
}

describe('worker heartbeat', () => {
  it('shows a slot busy with its task at once, the jobs whose blocklist keeps it off, then stopped', async () => {
    const { jobs, queue, workers: registry } = svc.service.ports;
    const call = api(svc.baseUrl, svc.apiKey);
    const [held, broken] = [await createJob(call), await createJob(call)];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const lanes: Lane[] = [
      { name: 'cpu-0', kinds: ['render-chunk'], slot: { id: 'cpu-0', kind: 'cpu', gpuUuids: [] } },
    ];
    const activity = new LaneActivity();
    const placement = new Placement({ queue, builds: [] }, { blocklistThreshold: 2 });
    const rt = new WorkerRuntime(
      { jobs, queue, log: pino({ level: 'silent' }), placement, activity },
      lanes,
      {
        'render-chunk': async (task) => {
          if (task.jobId === broken.id) throw new RetryableTaskError('CUDA error: illegal address');
          await released;
        },
      },
      {
        workerName: 'hb',
        workerId: 'hb',
        pollMs: 20,
        heartbeatMs: 50,
        retryBaseMs: 10,
        maxAttempts: 5,
        refusalDelayMs: 40,
      },
    );
    // A long period: whatever shows up sooner came from a slot change.
    const heartbeat = new WorkerHeartbeat(
      registry!.registry,
      {
        identity: {
          id: 'hb:1',
          name: 'hb',
          hostname: 'render-7',
          version: '9.9.9',
          builds: [{ version: '4.2.0', path: '/opt/blender/blender' }],
          gpus: [],
        },
        lanes,
        activity,
        blocklistedBy: () => placement.blocklistedBy(),
      },
      { intervalMs: 60_000 },
    );
    heartbeat.start();
    rt.start();
    try {
      await queue.enqueue({
        id: `bad-${broken.id}-0`,
        jobId: broken.id,
        kind: 'render-chunk',
        payload: { frames: [1] },
      });
      await queue.enqueue({
        id: `bad-${broken.id}-1`,
        jobId: broken.id,
        kind: 'render-chunk',
        payload: { frames: [2] },
      });
      await waitUntil(
        'the slot to be kept off the broken job',
        async () => ((await queue.jobFailures(broken.id))['hb/cpu-0'] ?? 0) >= 2,
      );
      await queue.enqueue({
        id: `ok-${held.id}`,
        jobId: held.id,
        kind: 'render-chunk',
        payload: { frames: [5, 6, 7] },
      });
      const busy = await waitUntil('the slot to show the held task', async () => {
        const slot = (await workers()).find((w) => w.id === 'hb:1')?.slots[0];
        return slot?.tasks[0]?.jobId === held.id ? slot : undefined;
      });
      expect(busy).toMatchObject({ id: 'cpu-0', state: 'busy', device: { kind: 'cpu', name: 'CPU' } });
      expect(busy.tasks).toEqual([
        {
          kind: 'render-chunk',
          jobId: held.id,
          jobName: 'scene.blend',
          taskId: `ok-${held.id}`,
          frames: [5, 6, 7],
          startedAt: expect.any(String),
        },
      ]);
      const me = (await workers()).find((w) => w.id === 'hb:1')!;
      expect(me).toMatchObject({ name: 'hb', version: '9.9.9', state: 'running' });
      // A tenant's view: no host name (the operator's is `renderbridge admin workers`).
      expect(me).not.toHaveProperty('hostname');
      expect(me.blocklistedBy).toEqual([
        { jobId: broken.id, jobName: 'scene.blend', slots: ['hb/cpu-0'], failures: 2 },
      ]);
      // Another workspace: busy, on nothing it may know of.
      const rival = (await workers(rivalKey)).find((w) => w.id === 'hb:1')!;
      expect(rival.slots[0]!.tasks[0]).toMatchObject({ kind: 'render-chunk', jobId: null, taskId: null, frames: null });
      expect(rival.blocklistedBy).toEqual([]);

      release();
      await waitUntil(
        'the slot to show idle',
        async () => (await workers()).find((w) => w.id === 'hb:1')?.slots[0]?.state === 'idle',
      );
    } finally {
      release();
      await rt.stop();
      await heartbeat.stop();
    }
    const stopped = (await workers()).find((w) => w.id === 'hb:1')!;
    expect(stopped.state).toBe('stopped');
  });
});
