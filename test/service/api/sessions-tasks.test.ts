// GET /jobs/{id}/tasks (extension job-tasks) over real HTTP on every stack: a job's tasks as the
// queue holds them (the test plays the worker through the queue port), with frames, state,
// worker, attempt, duration and exit reason; another workspace's job is a 404.
import { describe, expect, it } from 'vitest';
import { JobTaskList } from '../../../shared/api/dashboard.js';
import { ExtensionList } from '../../../shared/extensions.js';
import { newTasks } from '../../../service/domain/tasks.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';
import { signIn } from '../dashboard/session-client.js';

const used = useTestService();

describe("a job's tasks", () => {
  it('lists validation, planning, each chunk with frames, state, worker, attempt, duration, exit reason', async () => {
    const call = api(used.svc.baseUrl, used.svc.apiKey);
    const job = await createJob(call);
    const other = await createJob(call);
    const q = used.svc.service.ports.queue;
    await q.enqueue(newTasks.validate(job.id));
    await q.enqueue(newTasks.chunk(job.id, { index: 0, start: 1, end: 3, step: 1, frames: [1, 2, 3] }));
    await q.enqueue(newTasks.chunk(job.id, { index: 1, start: 4, end: 5, step: 1, frames: [4, 5] }));
    await q.enqueue(newTasks.validate(other.id));
    const v = await q.claim('farm-1:control', ['validate'], 60_000);
    expect(v?.jobId).toBe(job.id);
    await q.complete(v!.id, 'farm-1:control');
    const c = await q.claim('farm-1:gpu0', ['render-chunk'], 60_000);
    await q.fail(c!.id, 'farm-1:gpu0', { retryable: false, message: 'Error: Out of GPU memory' });
    await q.claim('farm-2:gpu0', ['render-chunk'], 60_000);

    const r = await call('GET', `/jobs/${job.id}/tasks`);
    expect(r.status).toBe(200);
    const tasks = JobTaskList.parse(r.body).data;
    expect(tasks.map((t) => [t.kind, t.frames, t.state, t.worker, t.attempt, t.exitReason])).toEqual([
      ['validate', null, 'done', 'farm-1:control', 1, 'done'],
      ['render-chunk', [1, 2, 3], 'failed', 'farm-1:gpu0', 1, 'Error: Out of GPU memory'],
      ['render-chunk', [4, 5], 'running', 'farm-2:gpu0', 1, null],
    ]);
    for (const t of tasks) {
      expect(t.startedAt, t.id).not.toBeNull();
      expect(t.durationSeconds, t.id).toBeGreaterThanOrEqual(0);
    }
    expect(tasks[2]!.finishedAt).toBeNull();
    // The same through a dashboard session.
    const s = await signIn(used.svc.baseUrl, used.svc.apiKey);
    expect(JobTaskList.parse((await s.call('GET', `/jobs/${job.id}/tasks`)).body).data).toHaveLength(3);
    // A job with no tasks yet has an empty list.
    const idle = await createJob(call);
    expect((await call('GET', `/jobs/${idle.id}/tasks`)).body).toEqual({ data: [] });
  });

  it("answers another workspace's job like a missing one (404), and is listed by GET /extensions", async () => {
    const rivalKey = await used.svc.createApiKey('rival tasks');
    const rivalJob = await createJob(api(used.svc.baseUrl, rivalKey));
    await used.svc.service.ports.queue.enqueue(newTasks.validate(rivalJob.id));
    const r = await api(used.svc.baseUrl, used.svc.apiKey)('GET', `/jobs/${rivalJob.id}/tasks`);
    expect(r.status).toBe(404);
    expect(errorBody(r).name).toBe('JOB_NOT_FOUND');
    expect(errorBody(await api(used.svc.baseUrl, used.svc.apiKey)('GET', '/jobs/not-a-uuid/tasks')).name).toBe(
      'VALIDATION_ERROR',
    );
    const ext = ExtensionList.parse((await api(used.svc.baseUrl, used.svc.apiKey)('GET', '/extensions')).body).data
      .extensions;
    expect(ext.map((e) => [e.name, e.routes])).toEqual(
      expect.arrayContaining([
        ['dashboard-sessions', ['createSession', 'getCurrentSession', 'deleteCurrentSession']],
        ['job-events', ['streamJobEvents']],
        ['job-tasks', ['listJobTasks']],
      ]),
    );
  });
});
