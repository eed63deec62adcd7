// Preemption on remote workers (extension scheduling, preemptPriorityGap): a worker that reaches the
// queue only through the internal worker API reads the waiting priority and takes hand-back places
// there (waiting-routes.ts, RemoteTaskQueue), with the watch of service/worker/render/
// warm-preemption.ts. Two such workers each rendering a task of a low job and one waiting task of a
// high job: exactly one hands back; a second waiting task frees the other. The hand-back's reason
// shows on GET /jobs/{id} (Job.preemption) until the task runs again.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { initialScheduling } from '../../../service/domain/scheduling.js';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import type { JobRecord } from '../../../service/ports/jobs.js';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { outputLayout } from '../../../service/worker/outputs/chunk-files.js';
import { DeferTaskError } from '../../../service/worker/runtime/outcomes.js';
import type { TaskContext } from '../../../service/worker/runtime/runtime.js';
import { clearHandBack, wasHandedBack } from '../../../service/worker/render/preemption-notice.js';
import { PreemptionWatch } from '../../../service/worker/render/warm-preemption.js';
import { createJob } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { TOKEN, workerApiHarness } from './worker-api-harness.js';

const h = workerApiHarness();
const log = pino({ level: 'silent' });

/** A job at `priority` (requiring `tags`) with `chunks` render chunks queued. */
async function jobWith(priority: number, chunks: number, tags: string[] = []): Promise<string> {
  const { id } = await createJob(h.call);
  await h.svc.service.ports.jobs.update(id, { scheduling: initialScheduling({ priority, requiredTags: tags }, []) });
  for (let i = 0; i < chunks; i++) await enqueue(id, i, priority);
  return id;
}

const enqueue = (jobId: string, i: number, priority: number) =>
  h.svc.service.ports.queue.enqueue({
    id: `chunk:${jobId}:${i}`,
    jobId,
    kind: 'render-chunk',
    payload: { frames: [i + 1] },
    priority,
  });

/** A remote worker: its queue through the worker API, its watch, and the task of `jobId` it claimed. */
async function remoteWorker(name: string, low: string) {
  const queue = new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token: TOKEN, retryDelayMs: 50 });
  const task = await queue.claim(`${name}:cpu-0`, ['render-chunk'], 60_000);
  expect(task?.jobId).toBe(low);
  const jobs = h.remote();
  // Every read of the queue is new (readEveryMs 0): the test decides when the queue changes.
  const watch = new PreemptionWatch({ gap: 30, queue, jobs, holder: name, readEveryMs: 0 });
  const rec = (await jobs.getById(low)) as JobRecord;
  const ctx = { job: rec, lane: { name: 'cpu-0' }, log, taskLog: { note: () => undefined } };
  const before = (todo: number[], i: number) =>
    watch.beforeFrame(ctx as unknown as TaskContext, outputLayout(`/tmp/rb-none-${name}`), todo, i, task!.id);
  return { queue, task: task!, before };
}

describe('preemption on remote workers', () => {
  it('reads the waiting priority, hands back one slot per waiting task, and shows why on the job', async () => {
    const low = await jobWith(10, 2);
    const a = await remoteWorker('remote-a', low);
    const b = await remoteWorker('remote-b', low);
    // Nothing outranks the low job yet: both render on.
    await expect(a.before([1, 2], 1)).resolves.toBeUndefined();

    const high = await jobWith(90, 1);
    expect(await a.queue.topWaiting(['render-chunk'])).toEqual({ priority: 90, jobId: high, requiredTags: [] });
    const both = await Promise.allSettled([a.before([1, 2], 1), b.before([1, 2], 1)]);
    const handedBack = both.filter((r) => r.status === 'rejected');
    // One waiting task, one slot freed for it: the other worker renders on.
    expect(handedBack).toHaveLength(1);
    const err = (handedBack[0] as PromiseRejectedResult).reason as DeferTaskError;
    expect(err).toBeInstanceOf(DeferTaskError);
    expect(err.message).toBe('paused for a priority-90 job after frame 1');
    const first = both[0]!.status === 'rejected' ? a : b;
    const other = first === a ? b : a;
    // Asked again, the other still finds the one place taken.
    await expect(other.before([1, 2], 1)).resolves.toBeUndefined();

    const shown = await h.publicJob(low);
    expect(shown.preemption).toMatchObject({
      reason: 'paused for a priority-90 job after frame 1',
      priority: 90,
      afterFrame: 1,
      tasks: [first.task.id],
    });
    expect(wasHandedBack({ job: shown } as JobRecord, first.task.id)).toBe(true);

    // A second waiting task of the high job: a second place, so the other worker hands back too.
    await enqueue(high, 1, 90);
    await expect(other.before([1, 2, 3], 2)).rejects.toThrow('paused for a priority-90 job after frame 2');
    expect((await h.publicJob(low)).preemption).toMatchObject({
      reason: 'paused for a priority-90 job after frame 2',
      tasks: [first.task.id, other.task.id],
    });

    // Each task running again takes itself out; the notice goes with the last.
    await clearHandBack(h.remote(), low, first.task.id, log);
    expect((await h.publicJob(low)).preemption?.tasks).toEqual([other.task.id]);
    await clearHandBack(h.remote(), low, other.task.id, log);
    expect((await h.publicJob(low)).preemption ?? null).toBeNull();
  });

  it("carries the waiting job's required tags, which a remote worker may not read itself", async () => {
    const queue = new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token: TOKEN });
    // Above everything the test before left in the queue.
    const tagged = await jobWith(100, 1, ['site:paris']);
    expect(await queue.topWaiting(['render-chunk'])).toEqual({
      priority: 100,
      jobId: tagged,
      requiredTags: ['site:paris'],
    });
    expect(await queue.topWaiting(['validate'])).toBeUndefined();
  });

  it("holds a token's places under its own name: another token's worker cannot take them over", async () => {
    const high = await jobWith(95, 1);
    const named = async (name: string) =>
      new RemoteTaskQueue({
        serviceUrls: [h.svc.origin],
        token: (await createWorkerToken(h.svc.service.ports.workerTokens, name)).token,
      });
    const a = await named(`tok-a-${high.slice(0, 8)}`);
    const b = await named(`tok-b-${high.slice(0, 8)}`);
    expect(await a.takeHandBackPlace(high, ['render-chunk'], 'slot', 60_000)).toBe(true);
    // The same holder name from another token is another holder: the one place stays a's.
    expect(await b.takeHandBackPlace(high, ['render-chunk'], 'slot', 60_000)).toBe(false);
    expect(await a.takeHandBackPlace(high, ['render-chunk'], 'slot', 60_000)).toBe(true);
  });

  it('shows no notice on a job that ended while a task of it waited handed back', async () => {
    const low = await jobWith(10, 1);
    const q = new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token: TOKEN });
    const notice = { reason: 'paused for a priority-90 job after frame 3', priority: 90, afterFrame: 3 };
    await h.remote().update(low, {
      preemption: { ...notice, since: new Date().toISOString(), tasks: [`chunk:${low}:0`] },
    });
    expect((await h.publicJob(low)).preemption).toMatchObject(notice);
    expect(await q.cancelJob(low)).toBe(1);
    expect((await h.call('POST', `/jobs/${low}/cancel`)).status).toBe(200);
    expect((await h.publicJob(low)).preemption).toBeNull();
    const listed = await h.call<{ jobs: { id: string; preemption?: unknown }[] }>('GET', '/jobs?pageSize=100');
    expect(listed.body.jobs.find((j) => j.id === low)?.preemption).toBeNull();
  });

  it('refuses the preemption routes without a worker token, and a body it does not know', async () => {
    for (const route of ['/tasks/waiting-top', '/tasks/hand-back-place']) {
      const r = await h.internal('POST', route, { kinds: ['render-chunk'] }, { token: null });
      expect(r.status).toBe(401);
      const wrong = await h.internal('POST', route, { kinds: ['render-chunk'] }, { token: `${TOKEN}x` });
      expect(wrong.status).toBe(401);
    }
    const bad = await h.internal('POST', '/tasks/waiting-top', { kinds: ['render-chunk'], extra: 1 });
    expect(bad.status).toBe(400);
    expect(errorBody(bad).name).toBe('VALIDATION_ERROR');
    const noJob = await h.internal('POST', '/tasks/hand-back-place', { kinds: ['render-chunk'], holder: 'x' });
    expect(noJob.status).toBe(400);
  });
});
