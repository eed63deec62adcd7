// What the farm share tests (API and dashboard) play instead of workers: a job's planned render
// chunks in the queue, and a live worker whose slot renders a frame of a given job, so the queue
// ahead and the shares are known exactly, with no Blender and no timing.
import type { Job } from '../../shared/api/job.js';
import { shareGroupOf } from '../../service/domain/scheduling.js';
import type { TestService } from './service.js';

/** Queues `n` one-frame render chunks of `job` at `priority`, as its planning would. */
export async function queueChunks(svc: TestService, job: Job, n: number, priority: number): Promise<void> {
  for (let i = 0; i < n; i++)
    await svc.service.ports.queue.enqueue({
      id: `chunk:${job.id}:${i}`,
      jobId: job.id,
      kind: 'render-chunk',
      payload: { frames: [i + 1] },
      priority,
      shareGroup: shareGroupOf(job),
    });
}

/** Reports a live worker with two CPU render slots (and its control lane), the first rendering a frame of `busyJob`. */
export async function reportBusyWorker(svc: TestService, busyJob: Job): Promise<void> {
  const device = (kind: 'cpu' | 'control', name: string) => ({ kind, name, uuid: null });
  const startedAt = new Date().toISOString();
  await svc.service.ports.workers!.registry.report({
    id: 'render-1:1',
    name: 'render-1',
    hostname: 'render-1',
    version: 'test',
    startedAt,
    state: 'running',
    // Long: the worker stays live for the whole test without another report.
    heartbeatIntervalMs: 60_000,
    slots: [
      { id: 'control', device: device('control', 'control'), state: 'idle', tasks: [], warmJobId: null },
      {
        id: 'cpu-0',
        device: device('cpu', 'CPU'),
        state: 'busy',
        warmJobId: null,
        tasks: [{ jobId: busyJob.id, taskId: 'running', kind: 'render-chunk', frames: [9], startedAt }],
      },
      { id: 'cpu-1', device: device('cpu', 'CPU'), state: 'idle', tasks: [], warmJobId: null },
    ],
    builds: [],
    gpus: [],
    blocklistedBy: [],
  });
}
