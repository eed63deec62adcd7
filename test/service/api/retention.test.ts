// Output retention: once scheduledForDeletionAt passes, the sweeper deletes a job's outputs and
// the job says so; the job record stays.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Downloads } from '../../../shared/api/downloads.js';
import { JobEnvelope } from '../../../shared/api/job.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { jobLogPrefix } from '../../../service/domain/task-log-keys.js';
import { RetentionSweeper } from '../../../service/retention.js';
import { outputLayout } from '../../../service/worker/outputs/chunk-files.js';
import { encodeRel } from '../../../service/worker/outputs/frame-staging.js';
import { keepStoppedJob } from '../../../service/worker/outputs/kept-frames.js';
import { jobDirOf } from '../../../service/worker/project/job-files.js';
import { createJob } from '../../helpers/flow.js';
import { startTestService, type TestService, useTestService } from '../../helpers/service.js';

// Sweeps only when the test asks (a long interval), so the test controls the timing.
const used = useTestService();
const { call } = used;

/** One sweep of `on`'s retention as it would run `days` days from now. */
const sweepDaysLater = (on: TestService, days: number) =>
  new RetentionSweeper(
    { ...on.service.ports, log: pino({ level: 'silent' }) },
    { now: () => Date.now() + days * 86_400_000 },
  ).sweep();

async function completedWithOutputs(expiresInMs: number) {
  const job = await createJob(call);
  const { jobs, storage } = used.svc.service.ports;
  const path: JobStatus[] = ['created', 'validating', 'validated', 'booting', 'rendering', 'finalizing', 'completed'];
  const base = `outputs/${job.workspaceId}/${job.id}`;
  await storage.put(`${base}/frames/f_0001.png`, Readable.from([Buffer.from('frame')]));
  await jobs.update(
    job.id,
    {},
    {
      previewKey: `${base}/frames/f_0001.png`,
      outputs: {
        frames: [
          { key: `${base}/frames/f_0001.png`, fileName: 'f_0001.png', view: null, outputType: 'frame', size: 5 },
        ],
        composites: [],
        framesZipKey: null,
        compositesZipKey: null,
        videos: [],
      },
    },
  );
  for (let i = 1; i < path.length; i++) await jobs.transition(job.id, [path[i - 1]!], path[i]!);
  await jobs.update(job.id, {
    output: { isDeletedForClient: false, scheduledForDeletionAt: new Date(Date.now() + expiresInMs).toISOString() },
  });
  return { job, key: `${base}/frames/f_0001.png` };
}

describe('retention sweeper', () => {
  it('deletes expired outputs, marks the job, and leaves unexpired jobs alone', async () => {
    const expired = await completedWithOutputs(-1000);
    const live = await completedWithOutputs(3_600_000);
    const before = Downloads.parse((await call('GET', `/jobs/${expired.job.id}/downloads`)).body);
    const oldUrl = before.frames[0]!;
    expect((await fetch(oldUrl)).status).toBe(200);

    expect(await used.svc.service.retention.sweep()).toBe(1);

    const job = JobEnvelope.parse((await call('GET', `/jobs/${expired.job.id}`)).body).data;
    expect(job.output?.isDeletedForClient).toBe(true);
    expect(job.previewUrl).toBeNull();
    expect(job.status).toBe('completed');
    const after = Downloads.parse((await call('GET', `/jobs/${expired.job.id}/downloads`)).body);
    expect(after.frames).toEqual([]);
    expect(after.frameOutputs).toEqual([]);
    expect(await used.svc.service.ports.storage.stat(expired.key)).toBeUndefined();
    expect((await fetch(oldUrl)).status).toBe(404);

    const kept = JobEnvelope.parse((await call('GET', `/jobs/${live.job.id}`)).body).data;
    expect(kept.output?.isDeletedForClient).toBe(false);
    expect(await used.svc.service.ports.storage.stat(live.key)).toBeDefined();
    expect(await used.svc.service.retention.sweep()).toBe(0);
  });
});

describe('finished tasks', () => {
  it('are deleted from the queue once older than the retention time (7 days); open ones stay', async () => {
    const own = await startTestService();
    try {
      const { queue } = own.service.ports;
      await queue.enqueue({ id: 'r-done', jobId: 'rj', kind: 'render-chunk' });
      await queue.enqueue({ id: 'r-open', jobId: 'rj', kind: 'validate' });
      const t = await queue.claim('w', ['render-chunk'], 60_000);
      await queue.complete(t!.id, 'w');
      await sweepDaysLater(own, 6);
      expect((await queue.jobTasks('rj')).map((x) => x.id)).toEqual(['r-done', 'r-open']);
      await sweepDaysLater(own, 8);
      expect((await queue.jobTasks('rj')).map((x) => [x.id, x.state])).toEqual([['r-open', 'queued']]);
    } finally {
      await own.close();
    }
  });
});

describe('frames a stopped job kept for a requeue', () => {
  it('are kept unpublished (early ones go) until outputRetentionDays, then deleted by the sweeper', async () => {
    const job = await createJob(call);
    const { jobs, storage } = used.svc.service.ports;
    await jobs.transition(job.id, ['created'], 'failed');
    const base = `outputs/${job.workspaceId}/${job.id}`;
    const workRoot = await mkdtemp(path.join(tmpdir(), 'rb-kept-'));
    try {
      const out = outputLayout(jobDirOf(workRoot, job.id));
      await mkdir(out.frames, { recursive: true });
      await writeFile(path.join(out.frames, 'f_0001.png'), 'frame one');
      await storage.put(`${base}/frames/f_0001.png`, Readable.from([Buffer.from('stored early')]));
      await keepStoppedJob(
        { storage, jobs, settings: { workRoot, stageFrames: false, outputRetentionDays: 30 } },
        (await jobs.getById(job.id))!,
      );
    } finally {
      await rm(workRoot, { recursive: true, force: true });
    }
    const keptKey = `${base}/kept/frames/${encodeRel('f_0001.png')}`;
    expect((await storage.list(`${base}/`)).map((o) => o.key)).toEqual([keptKey]);
    // The client sees a failed job without outputs, as before.
    const failed = JobEnvelope.parse((await call('GET', `/jobs/${job.id}`)).body).data;
    expect(failed.output).toEqual({ isDeletedForClient: false, scheduledForDeletionAt: null });
    expect(Downloads.parse((await call('GET', `/jobs/${job.id}/downloads`)).body).frames).toEqual([]);

    await sweepDaysLater(used.svc, 29);
    expect(await storage.stat(keptKey)).toBeDefined();
    await sweepDaysLater(used.svc, 31);
    expect(await storage.stat(keptKey)).toBeUndefined();
    const after = JobEnvelope.parse((await call('GET', `/jobs/${job.id}`)).body).data;
    expect(after).toMatchObject({
      status: 'failed',
      output: { isDeletedForClient: true, scheduledForDeletionAt: null },
    });
  });
});

describe('task logs of a job that stopped before any frame was kept', () => {
  it('stay for outputRetentionDays after POST /cancel, then the sweeper deletes them', async () => {
    const job = await createJob(call);
    const { storage } = used.svc.service.ports;
    // What a validation attempt left (task-logs extension) before the job was canceled.
    const logKey = `${jobLogPrefix(job.workspaceId, job.id)}/validate/a1.log`;
    await storage.put(logKey, Readable.from([Buffer.from('Blender 3.4 analysis output\n')]));
    expect((await call('POST', `/jobs/${job.id}/cancel`)).status).toBe(200);
    await sweepDaysLater(used.svc, 29);
    expect(await storage.stat(logKey)).toBeDefined();
    await sweepDaysLater(used.svc, 31);
    expect(await storage.stat(logKey)).toBeUndefined();
    const after = JobEnvelope.parse((await call('GET', `/jobs/${job.id}`)).body).data;
    expect(after).toMatchObject({ status: 'canceled', output: { isDeletedForClient: true } });
  });
});
