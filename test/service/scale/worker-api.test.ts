// The internal worker API end to end: a real render with the worker runtime seeing jobs only through
// it (RemoteWorkerJobs), on the farm-wide token and on a worker's own token without queue credentials.
// The job store's calls, authentication and validation: worker-api-jobs.test.ts; failover across
// service URLs: worker-api-failover.test.ts.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../service/config-defaults.js';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { startWorker } from '../../../service/worker/start.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { pngInfo } from '../../helpers/png.js';
import { workerApiHarness } from './worker-api-harness.js';
import { blenderPresent } from '../../helpers/blender-present.js';

const blender = blenderPresent('the remote worker render test');

const h = workerApiHarness();

describe.skipIf(!blender)('a worker that sees jobs only through the worker API', () => {
  it('validates and renders a job end to end: completed, frame downloadable, webhook enqueued once', async () => {
    const workDir = await mkdtemp(path.join(tmpdir(), 'rb-remote-worker-'));
    const logs: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
    const remoteJobs = h.remote();
    const worker = await startWorker(
      {
        jobs: remoteJobs,
        storage: h.svc.service.ports.storage,
        queue: h.svc.service.ports.queue,
        onCompleted: (rec) => remoteJobs.completed(rec),
      },
      defaultConfig({ dataDir: workDir, workers: 1 }),
      log,
      { runtime: { heartbeatMs: 200, pollMs: 100, workerId: `remote-${randomUUID().slice(0, 8)}` } },
    );
    try {
      expect(worker.runtime, 'the worker found no Blender').toBeDefined();
      const client = new RenderJobClient({ baseUrl: h.svc.baseUrl, apiKey: h.svc.apiKey });
      const target = await client.uploadProject(await buildFixture('basic'));
      const job = await client.createJob({ slug: target.slug });
      await client.validateJob(job.id, {});
      const validated = await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
      expect(validated.analysis?.output?.resolution).toEqual([64, 48]);
      await client.renderJob(job.id, tinyRender('1'));
      const done = await client.waitForStatus(job.id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
      expect(done.finalConfig).toMatchObject({ frameRanges: ['1'], resolution: [64, 48] });

      const frames = (await client.getDownloads(job.id)).frameOutputs ?? [];
      expect(frames.map((f) => f.fileName)).toEqual(['f_0001.png']);
      const png = Buffer.from(await (await fetch(frames[0]!.url)).arrayBuffer());
      expect([pngInfo(png).width, pngInfo(png).height]).toEqual([64, 48]);
      expect(await client.getJobProgress(job.id)).toMatchObject({ framesTotal: 1, framesDone: 1 });
      // The worker reports the completion (which enqueues the webhook) just after the job turns
      // completed, so a fast poll may get there first.
      await waitUntil(
        'the onRenderComplete webhook enqueued',
        async () => (await h.svc.service.webhooks.listForJob(job.id)).length > 0,
        { timeoutMs: 10_000 },
      );
      expect(await h.svc.service.webhooks.listForJob(job.id)).toHaveLength(1);

      // Every state change of the job went through the worker API.
      const seen = h.svc.logs.join('');
      for (const route of ['transition', 'update', 'progress', 'completed'])
        expect(seen).toContain(`${WORKER_API_PREFIX}/jobs/${job.id}/${route}`);
    } catch (err) {
      console.error(logs.slice(-30).join(''));
      throw err;
    } finally {
      await worker.stop();
      await rm(workDir, { recursive: true, force: true });
    }
  }, 240_000);

  it('renders a job with its own token, no queue credential: tasks and job state all via the worker API', async () => {
    const workDir = await mkdtemp(path.join(tmpdir(), 'rb-remote-worker-'));
    const logs: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
    const name = `own-${randomUUID().slice(0, 8)}`;
    const { token } = await createWorkerToken(h.svc.service.ports.workerTokens, name);
    const remoteJobs = h.remote({ token });
    expect(await remoteJobs.whoami()).toBe(name);
    const queue = new RemoteTaskQueue({ serviceUrls: [h.svc.origin], token, retryDelayMs: 50 });
    const worker = await startWorker(
      {
        jobs: remoteJobs,
        storage: h.svc.service.ports.storage,
        queue,
        onCompleted: (rec) => remoteJobs.completed(rec),
      },
      defaultConfig({ dataDir: workDir, workers: 1 }),
      log,
      { runtime: { heartbeatMs: 200, pollMs: 100, workerName: name, workerId: `${name}:${process.pid}` } },
    );
    try {
      expect(worker.runtime, 'the worker found no Blender').toBeDefined();
      const client = new RenderJobClient({ baseUrl: h.svc.baseUrl, apiKey: h.svc.apiKey });
      const target = await client.uploadProject(await buildFixture('basic'));
      const job = await client.createJob({ slug: target.slug });
      await client.validateJob(job.id, {});
      await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
      await client.renderJob(job.id, tinyRender('1-2'));
      const done = await client.waitForStatus(job.id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
      expect(done.status).toBe('completed');
      expect(((await client.getDownloads(job.id)).frameOutputs ?? []).map((f) => f.fileName)).toEqual([
        'f_0001.png',
        'f_0002.png',
      ]);
      // Every task ran under this worker's name, claimed through the worker API (the finalize
      // task is marked done just after it completed the job).
      const runs = await waitUntil(
        'every task of the job done',
        async () => {
          const all = await h.svc.service.ports.queue.jobTaskRuns(job.id);
          return all.every((r) => r.state === 'done') ? all : undefined;
        },
        { timeoutMs: 10_000 },
      );
      expect(runs.length).toBeGreaterThanOrEqual(3);
      for (const r of runs)
        expect(r, r.id).toMatchObject({
          state: 'done',
          worker: expect.stringMatching(new RegExp(`^${name}:${process.pid}:`)),
        });
      expect(h.svc.logs.join('')).toContain(`${WORKER_API_PREFIX}/tasks/claim`);
    } catch (err) {
      console.error(logs.slice(-30).join(''));
      throw err;
    } finally {
      await worker.stop();
      await rm(workDir, { recursive: true, force: true });
    }
  }, 240_000);
});
