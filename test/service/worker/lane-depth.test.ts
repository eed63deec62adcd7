// A render lane of depth 2 (a warm slot) with the real runtime, queue and job store: it claims its
// next task as soon as the running one hands its work off, never more than two at once, and
// never before the hand-off. The handlers stand in for Blender.
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkerRuntime, type TaskHandler } from '../../../service/worker/runtime/runtime.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { waitUntil } from '../../helpers/e2e.js';

let svc: TestService;
beforeAll(async () => (svc = await startTestService()));
afterAll(() => svc.close());
const started: WorkerRuntime[] = [];
afterEach(async () => void (await Promise.all(started.splice(0).map((r) => r.stop()))));

/** Runs tasks on one lane of `depth`; each task is held until its release is called. */
function lane(name: string, depth: number, handOff: boolean) {
  const running = new Set<string>();
  const ran: string[] = [];
  const release = new Map<string, () => void>();
  let most = 0;
  const handler: TaskHandler = async (task, ctx) => {
    running.add(task.id);
    ran.push(task.id);
    most = Math.max(most, running.size);
    if (handOff) ctx.handedOff();
    await new Promise<void>((resolve) => {
      release.set(task.id, resolve);
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    running.delete(task.id);
  };
  const rt = new WorkerRuntime(
    { jobs: svc.service.ports.jobs, queue: svc.service.ports.queue, log: pino({ level: 'silent' }) },
    [{ name: 'cpu-0', kinds: ['render-chunk'], depth }],
    { 'render-chunk': handler },
    { pollMs: 20, heartbeatMs: 50, workerId: name },
  );
  started.push(rt);
  rt.start();
  return { running, ran, release, most: () => most };
}

async function enqueue(n: number): Promise<{ jobId: string; ids: string[] }> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  const ids = Array.from({ length: n }, (_, i) => `d-${job.id}-${i}`);
  for (const id of ids) await svc.service.ports.queue.enqueue({ id, jobId: job.id, kind: 'render-chunk' });
  return { jobId: job.id, ids };
}

const allDone = (jobId: string) => async () =>
  (await svc.service.ports.queue.jobTasks(jobId)).every((t) => t.state === 'done');

describe('lane depth', () => {
  it('holds the next task while the current one runs, once it is handed off; never more than two', async () => {
    const { jobId, ids } = await enqueue(4);
    const l = lane('deep', 2, true);
    await waitUntil('two tasks at once', () => l.running.size === 2, { timeoutMs: 10_000, intervalMs: 10 });
    expect([...l.running].sort()).toEqual(ids.slice(0, 2).sort());
    // The first ends: the lane claims the third while the second runs.
    l.release.get(ids[0]!)!();
    await waitUntil('the third task', () => l.running.has(ids[2]!), { timeoutMs: 10_000, intervalMs: 10 });
    expect(l.running.size).toBe(2);
    for (const id of ids.slice(1)) {
      await waitUntil(`${id} to run`, () => l.release.has(id), { timeoutMs: 10_000, intervalMs: 10 });
      l.release.get(id)!();
    }
    await waitUntil('every task done', allDone(jobId), { timeoutMs: 10_000 });
    expect(l.most()).toBe(2);
  });

  it('claims nothing more until the running task hands off: another lane gets the next task', async () => {
    const { jobId, ids } = await enqueue(2);
    const deep = lane('deep', 2, false);
    await waitUntil('the first task', () => deep.running.size === 1, { timeoutMs: 10_000, intervalMs: 10 });
    const other = lane('other', 1, false);
    await waitUntil('the other lane to take the second task', () => other.running.size === 1, {
      timeoutMs: 10_000,
      intervalMs: 10,
    });
    expect(deep.ran).toEqual([ids[0]]);
    expect(other.ran).toEqual([ids[1]]);
    deep.release.get(ids[0]!)!();
    other.release.get(ids[1]!)!();
    await waitUntil('both done', allDone(jobId), { timeoutMs: 10_000 });
    expect(deep.most()).toBe(1);
  });
});
