// The heartbeat of running tasks (task-beats.ts) on the real SQLite queue and job store, beaten by
// hand on a clock of the test's own: one read of a job per beat however many of its tasks run, a
// lease extended only once a quarter of it has passed (and then for real: the queue keeps the
// task), a cancel stopping exactly the canceled job's tasks, a lost lease stopping its task.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../service/ports/jobs.js';
import type { Task } from '../../../service/ports/tasks.js';
import { TaskBeats } from '../../../service/worker/runtime/task-beats.js';
import { CanceledTaskError } from '../../../service/worker/runtime/outcomes.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => (svc = await startTestService()));
afterAll(() => svc.close());

const LEASE_MS = 30_000;
const BEAT_MS = 500;
const log = pino({ level: 'silent' });

/** Enqueues `n` render chunks of a new job and claims them as `worker`. */
async function claimed(n: number, worker: string): Promise<{ jobId: string; tasks: Task[] }> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  for (let i = 0; i < n; i++)
    await svc.service.ports.queue.enqueue({ id: `b-${job.id}-${i}`, jobId: job.id, kind: 'render-chunk' });
  const tasks: Task[] = [];
  for (let i = 0; i < n; i++) tasks.push((await svc.service.ports.queue.claim(worker, ['render-chunk'], LEASE_MS))!);
  expect(tasks.map((t) => t.jobId)).toEqual(Array(n).fill(job.id));
  return { jobId: job.id, tasks };
}

/** TaskBeats over the real ports, counting what each beat asks of them. */
function beats(clock: { t: number }) {
  const { queue, jobs } = svc.service.ports;
  const reads: string[] = [];
  const extensions: string[] = [];
  const b = new TaskBeats(
    {
      queue: { extendLease: async (id, worker, ms) => (extensions.push(id), queue.extendLease(id, worker, ms)) },
      jobs: { getById: async (id): Promise<JobRecord | undefined> => (reads.push(id), jobs.getById(id)) },
    },
    // The test beats by hand, on its own clock.
    { leaseMs: LEASE_MS, heartbeatMs: BEAT_MS, now: () => clock.t, timer: false },
  );
  return { b, reads, extensions };
}

describe('task heartbeats', () => {
  it(
    'read each job once per beat, extend leases only once a quarter of the lease has passed, and the queue ' +
      'keeps the tasks',
    async () => {
      const worker = 'beats-a';
      const one = await claimed(2, worker);
      const other = await claimed(1, worker);
      const clock = { t: 1_000_000 };
      const { b, reads, extensions } = beats(clock);
      const controllers = [...one.tasks, ...other.tasks].map(() => new AbortController());
      const stops = [...one.tasks, ...other.tasks].map((t, i) => b.start(t, worker, controllers[i]!, log));
      try {
        for (let i = 1; i <= 13; i++) {
          clock.t += BEAT_MS;
          await b.beat();
        }
        // 13 beats of 3 tasks of 2 jobs: 2 reads a beat, no extension before a quarter of the lease less a beat (7 s).
        expect(reads.length).toBe(26);
        expect(reads.filter((id) => id === one.jobId).length).toBe(13);
        expect(extensions).toEqual([]);
        clock.t += BEAT_MS;
        await b.beat();
        expect(extensions.sort()).toEqual([...one.tasks, ...other.tasks].map((t) => t.id).sort());
        // The extension was real: the tasks are still this worker's, none can be claimed by another.
        expect(await svc.service.ports.queue.claim('beats-thief', ['render-chunk'], LEASE_MS)).toBeUndefined();
        expect(controllers.every((c) => !c.signal.aborted)).toBe(true);
      } finally {
        for (const stop of stops) stop();
      }
    },
  );

  it('stop the tasks of a canceled job, and only those, at the next beat', async () => {
    const worker = 'beats-b';
    const canceled = await claimed(2, worker);
    const going = await claimed(1, worker);
    const { b } = beats({ t: 0 });
    const controllers = [...canceled.tasks, ...going.tasks].map(() => new AbortController());
    const stops = [...canceled.tasks, ...going.tasks].map((t, i) => b.start(t, worker, controllers[i]!, log));
    try {
      const res = await api(svc.baseUrl, svc.apiKey)('POST', `/jobs/${canceled.jobId}/cancel`);
      expect(res.status).toBe(200);
      await b.beat();
      expect(controllers.map((c) => c.signal.aborted)).toEqual([true, true, false]);
      expect(controllers[0]!.signal.reason).toBeInstanceOf(CanceledTaskError);
      expect(String((controllers[0]!.signal.reason as Error).message)).toBe('job canceled');
    } finally {
      for (const stop of stops) stop();
    }
  });

  it('stop a task whose lease another worker holds now', async () => {
    const worker = 'beats-c';
    const { tasks } = await claimed(1, worker);
    const clock = { t: 0 };
    const { b } = beats(clock);
    const controller = new AbortController();
    const stop = b.start(tasks[0]!, worker, controller, log);
    try {
      // The lease ran out unseen (a stalled worker): the queue gave the task to another.
      await svc.service.ports.queue.release(tasks[0]!.id, worker);
      expect((await svc.service.ports.queue.claim('beats-other', ['render-chunk'], LEASE_MS))?.id).toBe(tasks[0]!.id);
      clock.t += LEASE_MS / 4;
      await b.beat();
      expect(controller.signal.aborted).toBe(true);
      expect(String((controller.signal.reason as Error).message)).toBe('lease lost');
    } finally {
      stop();
    }
  });
});
