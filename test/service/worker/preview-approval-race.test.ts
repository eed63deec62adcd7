// "Go" on the preview frames while the planner enqueues the job (extension scheduling): planning
// and the approve route both write the job's approval gate. With the real SQLite job store and
// queue, every ordering of their store calls is tried by pausing one side at its n-th call and
// running the other through before it goes on (no sleeps): the approval is never lost, and every
// frame is enqueued exactly once, with the finalize task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePreviews } from '../../../service/domain/preview-gate.js';
import { initialScheduling } from '../../../service/domain/scheduling.js';
import { taskIds } from '../../../service/domain/tasks.js';
import type { JobRecords } from '../../../service/ports/jobs.js';
import { enqueuePlan, type PreviewPlan } from '../../../service/worker/render/preview-plan.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => (svc = await startTestService()));
afterAll(() => svc.close());

type Store = Pick<JobRecords, 'getById' | 'setPreviewGate' | 'update'>;

/**
 * The store, with `other` run to its end before this side's `at`-th store call (0-based, any
 * method), or, by `finish`, after this side's last.
 */
function pausedAt(store: Store, at: number, other: () => Promise<unknown>) {
  let calls = 0;
  let ran: Promise<unknown> | undefined;
  const jobs = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (calls++ === at) await (ran = other());
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return { jobs, finish: async () => void (await (ran ?? (ran = other()))) };
}

/** A job of 9 frames planned as previews 1, 5, 9 and chunks 2-4 and 6-8, waiting for approval. */
async function plannedJob(): Promise<{ id: string; plan: PreviewPlan }> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  const run = (start: number, end: number) => {
    const frames = Array.from({ length: end - start + 1 }, (_, i) => start + i);
    return { start, end, step: 1, frames };
  };
  const plan: PreviewPlan = { chunks: [run(1, 1), run(5, 5), run(9, 9), run(2, 4), run(6, 8)], previews: [1, 5, 9] };
  await svc.service.ports.jobs.update(
    job.id,
    { scheduling: initialScheduling({ approvePreviews: true }, []) },
    {
      render: {
        blender: 'blender',
        chunkTaskIds: plan.chunks.map((_, i) => taskIds.chunk(job.id, i)),
        frames: 9,
        slots: 1,
      },
    },
  );
  return { id: job.id, plan };
}

/** Each frame's count over the job's enqueued chunk tasks, and whether its finalize task is there. */
async function enqueued(jobId: string): Promise<{ frames: Record<number, number>; finalize: boolean }> {
  const frames: Record<number, number> = {};
  const runs = await svc.service.ports.queue.jobTaskRuns(jobId);
  for (const t of runs) for (const f of t.frames ?? []) frames[f] = (frames[f] ?? 0) + 1;
  return { frames, finalize: runs.some((t) => t.kind === 'finalize') };
}

const everyFrameOnce = Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8, 9].map((f) => [f, 1]));
const requires = { blender: '4.2' };

describe('approving previews while the planner enqueues', () => {
  // The planner makes at most three store calls; 3 runs "go" after it ended.
  it.each([0, 1, 2, 3])('"go" before the planner\'s store call %i: approved, every frame once', async (at) => {
    const { id, plan } = await plannedJob();
    const ports = svc.service.ports;
    const side = pausedAt(ports.jobs, at, () => approvePreviews(ports, id));
    const rec = (await ports.jobs.getById(id))!;
    await enqueuePlan({ jobs: side.jobs, queue: ports.queue }, rec, plan, requires);
    await side.finish();
    const after = await ports.jobs.getById(id);
    expect(after?.job.scheduling?.previews).toEqual({ frames: [1, 5, 9], gate: 'approved' });
    expect(await enqueued(id)).toEqual({ frames: everyFrameOnce, finalize: true });
  });

  // "Go" makes at most two store calls; 2 runs the planner after it ended.
  it.each([0, 1, 2])('the planner before "go"\'s store call %i: approved, every frame once', async (at) => {
    const { id, plan } = await plannedJob();
    const ports = svc.service.ports;
    const rec = (await ports.jobs.getById(id))!;
    const side = pausedAt(ports.jobs, at, () => enqueuePlan(ports, rec, plan, requires));
    await approvePreviews({ jobs: side.jobs, queue: ports.queue }, id);
    await side.finish();
    const after = await ports.jobs.getById(id);
    expect(after?.job.scheduling?.previews).toEqual({ frames: [1, 5, 9], gate: 'approved' });
    expect(await enqueued(id)).toEqual({ frames: everyFrameOnce, finalize: true });
  });

  it('holds the rest while no "go" came, and a repeated "go" enqueues nothing twice', async () => {
    const { id, plan } = await plannedJob();
    const ports = svc.service.ports;
    await enqueuePlan(ports, (await ports.jobs.getById(id))!, plan, requires);
    expect((await ports.jobs.getById(id))?.job.scheduling?.previews?.gate).toBe('waiting');
    expect(await enqueued(id)).toEqual({ frames: { 1: 1, 5: 1, 9: 1 }, finalize: false });
    await approvePreviews(ports, id);
    await approvePreviews(ports, id);
    expect(await enqueued(id)).toEqual({ frames: everyFrameOnce, finalize: true });
  });
});
