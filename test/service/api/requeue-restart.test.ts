// Requeue requests without a worker, on both stacks: the test plays the worker (moves jobs through
// the state machine itself). A repeat after a service restart answers the job the first request
// made, concurrent repeats across two service instances make one job, and the new job's
// validate task is queued once its job is `validating`.
import { describe, expect, it } from 'vitest';
import { Job } from '../../../shared/api/job.js';
import { moveJob } from '../../../service/domain/job-lifecycle.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { startTestService, useTestService } from '../../helpers/service.js';

const used = useTestService();

const failedReason = { name: 'RETRIES_EXHAUSTED', type: 'RENDER_FAILED' as const, errorDetails: { message: 'test' } };

describe('requeue across a restart and across instances', () => {
  it('answers the same new job after a restart, and one job for concurrent requests to two instances', async () => {
    const { svc: first, call } = used;
    const job = await createJob(call);
    expect(await moveJob(first.service.ports.jobs, job.id, 'fail', { failedReason })).toBeDefined();
    const made = await call('POST', `/jobs/${job.id}/requeue`);
    expect(made.status).toBe(201);
    const newJob = Job.parse(made.body);
    expect(newJob.status).toBe('validating');
    // Its validate task is queued, for the job now validating.
    expect(await first.service.ports.queue.claim('w', ['validate'], 60_000)).toMatchObject({
      jobId: newJob.id,
      kind: 'validate',
    });
    await first.stop();

    // Same data folder and, on the scale stack, the same database, queue and bucket.
    const { databaseUrl, redisUrl, queuePrefix, s3 } = first.config;
    const config = { dataDir: first.dataDir, databaseUrl, redisUrl, queuePrefix, s3 };
    const second = await startTestService(config);
    const third = await startTestService(config);
    try {
      const c2 = api(second.baseUrl, first.apiKey);
      const again = await c2('POST', `/jobs/${job.id}/requeue`, {});
      expect(again.status).toBe(200);
      expect(again.headers.get('x-idempotent-replay')).toBe('true');
      expect(Job.parse(again.body).id).toBe(newJob.id);

      // Another frame selection is another requeue: the failed job never rendered, so it has none.
      const frames = await c2('POST', `/jobs/${job.id}/requeue`, { frames: '1' });
      expect(frames.status).toBe(400);
      expect(errorBody(frames).details?.[0]).toMatchObject({ code: 'frames_unknown', path: ['body', 'frames'] });

      // A second failed job, requeued at once through both instances.
      const other = await createJob(c2);
      expect(await moveJob(second.service.ports.jobs, other.id, 'cancel')).toBeDefined();
      const c3 = api(third.baseUrl, first.apiKey);
      const answers = await Promise.all([c2, c3, c2, c3].map((c) => c('POST', `/jobs/${other.id}/requeue`, {})));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 201]);
      expect(new Set(answers.map((a) => Job.parse(a.body).id)).size).toBe(1);
      const lineage = await c3<{ data: { requeues: unknown[] } }>('GET', `/jobs/${other.id}/lineage`);
      expect(lineage.body.data.requeues).toHaveLength(1);
      // Two uploads, one requeue of each: four jobs.
      const list = await c2<{ pagination: { total: number } }>('GET', '/jobs');
      expect(list.body.pagination.total).toBe(4);
    } finally {
      await third.close();
      await second.close();
    }
  });
});
