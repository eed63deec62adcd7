// A remote worker's batched enqueue (TaskSubmitter.enqueueMany through the internal worker API,
// POST /tasks/enqueue-many): a planned job's chunks and finalize go to the service in one call per
// 1,000 tasks, in order, as one batch of the service's queue. The route is bounded (tasks per
// call, body size), strict, and scoped like the single enqueue: a task of a job the token holds no
// task of fails the whole batch.
import { describe, expect, it } from 'vitest';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import type { EnqueueTask } from '../../../service/ports/tasks.js';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { ENQUEUE_MANY_BODY_LIMIT } from '../../../service/worker-api/task-contract.js';
import { createJob } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { TOKEN, workerApiHarness } from './worker-api-harness.js';

const h = workerApiHarness();

/** `n` one-frame chunks of `jobId`, then its finalize after all of them. */
function planned(jobId: string, n: number): EnqueueTask[] {
  const chunks = Array.from({ length: n }, (_, i) => ({
    id: `chunk:${jobId}:${i}`,
    jobId,
    kind: 'render-chunk' as const,
    payload: { frames: [i + 1] },
    shareGroup: 'ws/a',
  }));
  return [...chunks, { id: `finalize:${jobId}`, jobId, kind: 'finalize', after: chunks.map((c) => c.id) }];
}

/** A remote queue on `token` that counts the HTTP calls it makes. */
function countingQueue(token = TOKEN): { queue: RemoteTaskQueue; calls: string[] } {
  const calls: string[] = [];
  const counted: typeof fetch = (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${String(input as string).replace(/^.*\/internal\/worker\/v1/, '')}`);
    return fetch(input, init);
  };
  return { queue: new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token, fetch: counted }), calls };
}

const ids = async (jobId: string) => (await h.svc.service.ports.queue.jobTasks(jobId)).map((t) => t.id);

describe('POST /internal/worker/v1/tasks/enqueue-many', () => {
  it('takes a planned job in one call per 1,000 tasks, in order, its finalize held for its chunks', async () => {
    const { id } = await createJob(h.call);
    const { queue, calls } = countingQueue();
    const tasks = planned(id, 1000);
    await queue.enqueueMany(tasks);
    expect(calls).toEqual(['POST /tasks/enqueue-many', 'POST /tasks/enqueue-many']);
    expect(await ids(id)).toEqual(tasks.map((t) => t.id));
    const q = h.svc.service.ports.queue;
    expect((await q.claim('w:1', ['render-chunk'], 60_000))?.id).toBe(`chunk:${id}:0`);
    expect(await q.claim('w:1', ['finalize'], 60_000)).toBeUndefined();
    expect(await q.cancelJob(id)).toBe(1001);
  });

  it('refuses more tasks than one batch holds, and a body over its limit, enqueueing none', async () => {
    const { id } = await createJob(h.call);
    const many = await h.internal('POST', '/tasks/enqueue-many', { tasks: planned(id, 1000) });
    expect(many.status).toBe(400);
    expect(errorBody(many)).toMatchObject({ name: 'VALIDATION_ERROR', details: [{ path: ['body', 'tasks'] }] });
    const big = { ...planned(id, 1)[0]!, payload: { pad: 'x'.repeat(ENQUEUE_MANY_BODY_LIMIT) } };
    const large = await h.internal('POST', '/tasks/enqueue-many', { tasks: [big] });
    expect(large.status).toBe(413);
    expect(errorBody(large).name).toBe('PAYLOAD_TOO_LARGE');
    expect(await ids(id)).toEqual([]);
  });

  it('refuses a malformed batch with 400', async () => {
    const { id } = await createJob(h.call);
    const task = planned(id, 1)[0]!;
    const bodies = [{ tasks: [] }, { tasks: [{ ...task, extra: 1 }] }, { tasks: [{ ...task, jobId: 'x' }] }, [task]];
    for (const body of bodies) {
      const r = await h.internal('POST', '/tasks/enqueue-many', body);
      expect(r.status).toBe(400);
      expect(errorBody(r).name).toBe('VALIDATION_ERROR');
    }
    const notJson = await h.internal('POST', '/tasks/enqueue-many', undefined, { raw: '{"tasks": [' });
    expect(notJson.status).toBe(400);
    expect(errorBody(notJson).name).toBe('INVALID_JSON');
    expect(await ids(id)).toEqual([]);
  });

  it('refuses a call without a live worker token (401), and a batch naming a job out of its scope (404)', async () => {
    const { id } = await createJob(h.call);
    const body = { tasks: planned(id, 2) };
    expect((await h.internal('POST', '/tasks/enqueue-many', body, { token: null })).status).toBe(401);
    expect((await h.internal('POST', '/tasks/enqueue-many', body, { token: `${TOKEN}x` })).status).toBe(401);

    // A named token opens the job of the task it holds, and no other.
    const other = await createJob(h.call);
    await h.svc.service.ports.queue.enqueue({ id: `validate:${id}`, jobId: id, kind: 'validate' });
    const name = `enq-${id.slice(0, 8)}`;
    const { queue } = countingQueue((await createWorkerToken(h.svc.service.ports.workerTokens, name)).token);
    expect((await queue.claim(`${name}:cpu-0`, ['validate'], 60_000))?.jobId).toBe(id);
    await expect(queue.enqueueMany([...planned(id, 2), ...planned(other.id, 1)])).rejects.toMatchObject({
      status: 404,
      errorName: 'JOB_NOT_FOUND',
    });
    expect(await ids(id)).toEqual([`validate:${id}`]);
    expect(await ids(other.id)).toEqual([]);
    await queue.enqueueMany(planned(id, 2));
    expect(await ids(id)).toEqual([`validate:${id}`, ...planned(id, 2).map((t) => t.id)]);
  });
});
