// Priority, pause and resume while something else writes the job's scheduling (extension
// scheduling): another of those routes, the planner's dependency check (`waitingFor`), "go" on the
// previews. With the real SQLite job store and queue, every ordering of the two sides' store and
// queue calls is tried by pausing one side at its n-th call and running the other through before it
// goes on (no sleeps): no side's change is lost, and the queue ends as the job says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePreviews } from '../../../service/domain/preview-gate.js';
import { initialScheduling } from '../../../service/domain/scheduling.js';
import { changeScheduling, type SchedulingChange } from '../../../service/domain/scheduling-change.js';
import type { JobRecord, JobRecords } from '../../../service/ports/jobs.js';
import type { TaskScheduling } from '../../../service/ports/tasks.js';
import { awaitDependencies } from '../../../service/worker/render/dependency-wait.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { moveJob, startTestService, type TestService } from '../../helpers/service.js';

let svc: TestService;
beforeAll(async () => (svc = await startTestService()));
afterAll(() => svc.close());

type Jobs = Pick<JobRecords, 'getById' | 'setSchedulingFields' | 'setPreviewGate' | 'update'>;

/** The real queue's scheduling calls, each recorded per job: what the queue was told last. */
function recordingQueue(): { queue: TaskScheduling; told: Map<string, { priority?: number; paused?: boolean }> } {
  const q = svc.service.ports.queue;
  const told = new Map<string, { priority?: number; paused?: boolean }>();
  const note = (id: string, v: { priority?: number; paused?: boolean }) => told.set(id, { ...told.get(id), ...v });
  const queue: TaskScheduling = {
    setJobPriority: (id, priority) => {
      note(id, { priority });
      return q.setJobPriority(id, priority);
    },
    pauseJob: (id) => {
      note(id, { paused: true });
      return q.pauseJob(id);
    },
    resumeJob: (id) => {
      note(id, { paused: false });
      return q.resumeJob(id);
    },
  };
  return { queue, told };
}

/**
 * One side's store and queue, with `other` run to its end before this side's `at`-th call
 * (0-based, any method of either), or, by `finish`, after this side's last.
 */
function pausedAt<J extends object, Q extends object>(jobs: J, queue: Q, at: number, other: () => Promise<unknown>) {
  let calls = 0;
  let ran: Promise<unknown> | undefined;
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, key, receiver) {
        const value: unknown = Reflect.get(t, key, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (calls++ === at) await (ran = other());
          return (value as (...a: unknown[]) => Promise<unknown>).apply(t, args);
        };
      },
    });
  return { jobs: wrap(jobs), queue: wrap(queue), finish: async () => void (await (ran ?? (ran = other()))) };
}

/** A job with the scheduling of a render that asked for `approvePreviews`, waiting for `waitingFor`. */
async function scheduledJob(waitingFor: string[] = [], approve = false): Promise<string> {
  const job = await createJob(api(svc.baseUrl, svc.apiKey));
  const scheduling = { ...initialScheduling({ approvePreviews: approve }, waitingFor), dependsOn: waitingFor };
  await svc.service.ports.jobs.update(job.id, { scheduling });
  return job.id;
}

async function scheduling(id: string) {
  return (await svc.service.ports.jobs.getById(id))?.job.scheduling;
}

// A change makes at most four calls when nobody interferes (write, queue, read); 4 runs the
// other side after it ended.
const AT = [0, 1, 2, 3, 4];

describe('two scheduling changes at once', () => {
  const pairs: [string, SchedulingChange, SchedulingChange][] = [
    ['priority, then pause', { priority: 90 }, { paused: true }],
    ['pause, then priority', { paused: true }, { priority: 10 }],
    ['pause, then resume', { paused: true }, { paused: false }],
    ['resume, then pause', { paused: false }, { paused: true }],
    ['priority 90, then 10', { priority: 90 }, { priority: 10 }],
  ];
  describe.each(pairs)('%s', (_name, first, second) => {
    it.each(AT)("the second before the first one's call %i: both kept, the queue as the job", async (at) => {
      const id = await scheduledJob();
      const { queue, told } = recordingQueue();
      const jobs = svc.service.ports.jobs as Jobs;
      const side = pausedAt(jobs, queue, at, () => changeScheduling({ jobs, queue }, id, second));
      await changeScheduling(side, id, first);
      await side.finish();
      const s = await scheduling(id);
      const sameField = Object.keys(first)[0] === Object.keys(second)[0];
      // Changes of different fields both stay; of one field, either may win, but the queue follows the job.
      if (!sameField) expect(s).toMatchObject({ ...first, ...second });
      expect(told.get(id)).toEqual({
        ...('priority' in first || 'priority' in second ? { priority: s?.priority } : {}),
        ...('paused' in first || 'paused' in second ? { paused: s?.paused } : {}),
      });
    });
  });
});

describe('a priority change while the planner checks dependencies', () => {
  /** A job waiting for one completed job (the planner drops it from waitingFor) and one still going. */
  async function waitingJob(): Promise<{ id: string; pending: string }> {
    const call = api(svc.baseUrl, svc.apiKey);
    const [done, pending] = [await createJob(call), await createJob(call)];
    expect((await call('POST', `/jobs/${done.id}/validate`, {})).status).toBe(202);
    await moveJob(svc, done.id, ['validating', 'validated', 'booting', 'rendering', 'finalizing', 'completed']);
    return { id: await scheduledJob([done.id, pending.id]), pending: pending.id };
  }
  const jobs = () => svc.service.ports.jobs as Jobs;
  /** The planner's dependency check: it still waits for `pending`. */
  const plan = async (j: Pick<JobRecords, 'getById' | 'setSchedulingFields'>, rec: JobRecord) => {
    await expect(awaitDependencies(j, rec)).rejects.toThrow(/waiting for/);
  };

  // The planner makes three store calls: two reads and its write; 3 runs the route after it.
  it.each([0, 1, 2, 3])("the route before the planner's call %i: both kept", async (at) => {
    const { id, pending } = await waitingJob();
    const { queue } = recordingQueue();
    const rec = (await jobs().getById(id))!;
    const side = pausedAt(jobs(), queue, at, () => changeScheduling({ jobs: jobs(), queue }, id, { priority: 80 }));
    await plan(side.jobs, rec);
    await side.finish();
    expect(await scheduling(id)).toMatchObject({ priority: 80, waitingFor: [pending] });
  });

  it.each(AT)("the planner before the route's call %i: both kept", async (at) => {
    const { id, pending } = await waitingJob();
    const { queue } = recordingQueue();
    const rec = (await jobs().getById(id))!;
    const side = pausedAt(jobs(), queue, at, () => plan(jobs(), rec));
    await changeScheduling(side, id, { priority: 80 });
    await side.finish();
    expect(await scheduling(id)).toMatchObject({ priority: 80, waitingFor: [pending] });
  });
});

describe('a pause while the previews are approved', () => {
  it.each(AT)('"go" before the pause\'s call %i: approved and paused', async (at) => {
    const id = await scheduledJob([], true);
    const { queue } = recordingQueue();
    const ports = svc.service.ports;
    const side = pausedAt(ports.jobs as Jobs, queue, at, () => approvePreviews(ports, id));
    await changeScheduling(side, id, { paused: true });
    await side.finish();
    expect(await scheduling(id)).toMatchObject({ paused: true, previews: { gate: 'approved' } });
  });
});
