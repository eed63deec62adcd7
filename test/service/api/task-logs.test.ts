// The task-logs extension's routes on the real service and its real storage (files here, S3 on
// the scale stack), with logs written by the worker's own TaskLog: every run of every task under
// its header in task order, narrowing by task and attempt, the index, a follow that brings new
// lines and ends once the job has ended, another workspace's job as a 404, hostile queries as
// 4xx, and retention deleting the logs with the outputs.
import { beforeAll, describe, expect, it } from 'vitest';
import { TaskLogIndex } from '../../../shared/api/task-logs.js';
import type { Job } from '../../../shared/api/job.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { jobLogPrefix, runStem, taskLogSegment } from '../../../service/domain/task-log-keys.js';
import { newTasks } from '../../../service/domain/tasks.js';
import { TaskLog } from '../../../service/worker/logs/task-log.js';
import { createJob } from '../../helpers/flow.js';
import { api, errorBody } from '../../helpers/http.js';
import { useTestService } from '../../helpers/service.js';

let client: RenderJobClient;

const used = useTestService();
const { call } = used;
beforeAll(async () => {
  client = new RenderJobClient({ baseUrl: used.svc.baseUrl, apiKey: used.svc.apiKey });
});

function openLog(job: Job, taskId: string, kind: string, attempt: number, frames: number[] | null = null): TaskLog {
  return new TaskLog({
    storage: used.svc.service.ports.storage,
    stem: runStem(job.workspaceId, job.id, taskLogSegment(taskId, job.id)!, attempt, Date.now() + attempt),
    start: { taskId, kind, attempt, worker: `farm-1/cpu${attempt}`, startedAt: new Date().toISOString(), frames },
    flushMs: 60_000,
  });
}

/** A job with a validation log, a chunk whose first attempt failed, and its second attempt still running. */
async function jobWithLogs(): Promise<{ job: Job; chunkId: string; running: TaskLog }> {
  const job = await createJob(call);
  const { queue } = used.svc.service.ports;
  const chunk = newTasks.chunk(job.id, { index: 0, start: 1, end: 2, step: 1, frames: [1, 2] });
  await queue.enqueue(newTasks.validate(job.id));
  await queue.enqueue(chunk);
  const v = openLog(job, `validate:${job.id}`, 'validate', 1);
  v.line('stdout', 'Blender 3.4.1 (hash) analysing scene.blend');
  await v.close('done');
  const first = openLog(job, chunk.id, 'render-chunk', 1, [1, 2]);
  first.line('stdout', 'Fra:1 Mem:12M | Sample 1/4');
  first.line('stderr', 'Error: Out of memory');
  await first.close('retried', 'Blender crashed (SIGKILL)');
  const running = openLog(job, chunk.id, 'render-chunk', 2, [1, 2]);
  running.line('stdout', 'Fra:1 Mem:12M | Sample 2/4');
  await running.flush();
  return { job, chunkId: chunk.id, running };
}

describe('GET /jobs/{id}/logs', () => {
  it(
    'lists every run of every task in task order, each under a header naming task, frames, attempt, worker and ' +
      'state',
    async () => {
      const { job, chunkId, running } = await jobWithLogs();
      const r = await call<string>('GET', `/jobs/${job.id}/logs`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
      const headers = r.body.split('\n').filter((l) => l.startsWith('==> '));
      expect(headers).toEqual([
        `==> task validate:${job.id} (validate), attempt 1, worker farm-1/cpu1: done <==`,
        `==> task ${chunkId} (render-chunk, frames 1-2), attempt 1, worker farm-1/cpu1: retried <==`,
        `==> task ${chunkId} (render-chunk, frames 1-2), attempt 2, worker farm-1/cpu2: interrupted <==`,
      ]);
      expect(r.body).toMatch(
        /Z \[stderr\] Error: Out of memory\n.*attempt ended: retried: Blender crashed \(SIGKILL\)/,
      );
      expect(r.body).toContain('Sample 2/4');

      const one = await call<string>('GET', `/jobs/${job.id}/logs?task=${encodeURIComponent(chunkId)}&attempt=1`);
      expect(one.status).toBe(200);
      expect(one.body).toContain('Error: Out of memory');
      expect(one.body).not.toContain('Sample 2/4');
      expect(one.body).not.toContain('analysing');

      const index = TaskLogIndex.parse((await call('GET', `/jobs/${job.id}/logs/index`)).body).data;
      expect(index.tasks.map((t) => [t.id, t.attempts.map((a) => [a.attempt, a.state, a.live, a.worker])])).toEqual([
        [`validate:${job.id}`, [[1, 'done', false, 'farm-1/cpu1']]],
        [
          chunkId,
          [
            [1, 'retried', false, 'farm-1/cpu1'],
            [2, 'interrupted', true, 'farm-1/cpu2'],
          ],
        ],
      ]);
      const second = index.tasks[1]!.attempts[1]!;
      expect(second.storedBytes).toBeGreaterThan(0);
      expect(second.omittedBytes).toBe(0);
      await running.close('done');
      // The same through the typed client.
      expect((await client.jobLogIndex(job.id, { task: chunkId })).tasks.map((t) => t.id)).toEqual([chunkId]);
      let text = '';
      for await (const part of client.jobLogs(job.id, { task: chunkId, attempt: 2 })) text += part;
      expect(text).toContain('attempt ended: done');
      expect(await client.hasExtension('task-logs')).toBe(true);
    },
  );

  it('follows a running attempt: new lines arrive, new attempts show, the stream ends once the job ends', async () => {
    const { job, chunkId, running } = await jobWithLogs();
    const res = await fetch(`${used.svc.baseUrl}/jobs/${job.id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${used.svc.apiKey}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(seen)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the follow ended before ${pattern}: ${seen}`);
        seen += value;
      }
    };
    await readUntil(/Sample 2\/4/);
    running.line('stdout', 'Fra:2 Mem:12M | Sample 4/4 (written after the follow began)');
    await running.flush();
    await readUntil(/written after the follow began/);
    // A third attempt that starts meanwhile shows up under its own header.
    const third = openLog(job, chunkId, 'render-chunk', 3, [1, 2]);
    third.line('stdout', 'third attempt speaking');
    await third.flush();
    await readUntil(/attempt 3, worker farm-1\/cpu3: [a-z]+ <==\n(.*\n)*.*third attempt speaking/);
    await running.close('released');
    await third.close('done');
    await used.svc.service.ports.jobs.transition(job.id, ['created'], 'canceled');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    expect(seen).toMatch(/\[renderbridge\] job canceled: end of the log\n$/);
    expect(seen).toContain('attempt ended: released');
  });

  it('ends a follow of a job that has already ended at once, and of one attempt once it has ended', async () => {
    const { job, chunkId, running } = await jobWithLogs();
    await running.close('done');
    const one = await call<string>(
      'GET',
      `/jobs/${job.id}/logs?follow=true&task=${encodeURIComponent(chunkId)}&attempt=2`,
    );
    expect(one.status).toBe(200);
    expect(one.body).toMatch(/attempt ended: done\n(.*\n)*\[renderbridge\] attempt 2 has ended/);
    await used.svc.service.ports.jobs.transition(job.id, ['created'], 'canceled');
    const all = await call<string>('GET', `/jobs/${job.id}/logs?follow=true`);
    expect(all.status).toBe(200);
    expect(all.body).toMatch(/job canceled: end of the log\n$/);
  });

  it("answers another workspace's job exactly like a missing one, and names missing tasks and attempts", async () => {
    const { job, chunkId } = await jobWithLogs();
    const rival = api(used.svc.baseUrl, await used.svc.createApiKey('rival studio'));
    for (const suffix of ['/logs', '/logs/index', '/logs?follow=true']) {
      const other = await rival('GET', `/jobs/${job.id}${suffix}`);
      const none = await rival('GET', `/jobs/00000000-0000-4000-8000-000000000000${suffix}`);
      expect([other.status, errorBody(other).name]).toEqual([404, 'JOB_NOT_FOUND']);
      expect([none.status, errorBody(none).name]).toEqual([404, 'JOB_NOT_FOUND']);
    }
    const otherJob = await createJob(call);
    for (const q of [
      `task=${encodeURIComponent(chunkId.replace(job.id, otherJob.id))}`,
      `task=${encodeURIComponent(chunkId)}&attempt=9`,
    ]) {
      const r = await call('GET', `/jobs/${job.id}/logs?${q}`);
      expect([r.status, errorBody(r).name], q).toEqual([404, 'TASK_LOG_NOT_FOUND']);
      expect(errorBody(r).message).toMatch(/logs\/index/);
    }
  });

  it('refuses hostile queries with a 400 and the error body', async () => {
    const { job } = await jobWithLogs();
    const bad = [
      'task=../../etc/passwd',
      'task=chunk%3A..%2F..%3A1',
      'task=' + 'a'.repeat(300),
      'attempt=abc',
      'attempt=0',
      'attempt=99999999999999999999',
      'attempt=1e400',
      'follow=yes',
      'tail=10',
      'task=x&task=y',
    ];
    for (const q of bad) {
      const r = await call('GET', `/jobs/${job.id}/logs?${q}`);
      expect([r.status, errorBody(r).name], q).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect((await call('GET', `/jobs/${job.id}/logs/index?attempt=1`)).status).toBe(400);
  });
});

describe('retention', () => {
  it("deletes a job's task logs together with its outputs", async () => {
    const { job, running } = await jobWithLogs();
    await running.close('done');
    const { jobs, storage } = used.svc.service.ports;
    const path = ['created', 'validating', 'validated', 'booting', 'rendering', 'finalizing', 'completed'] as const;
    for (let i = 1; i < path.length; i++) await jobs.transition(job.id, [path[i - 1]!], path[i]!);
    await jobs.update(job.id, {
      output: { isDeletedForClient: false, scheduledForDeletionAt: new Date(Date.now() - 1000).toISOString() },
    });
    expect((await storage.list(jobLogPrefix(job.workspaceId, job.id))).length).toBeGreaterThan(0);
    expect(await used.svc.service.retention.sweep()).toBeGreaterThanOrEqual(1);
    expect(await storage.list(jobLogPrefix(job.workspaceId, job.id))).toEqual([]);
    const r = await call<string>('GET', `/jobs/${job.id}/logs`);
    expect(r.status).toBe(200);
    expect(r.body).toContain('no task has written a log yet');
  });
});
