// The workers extension and /readyz against the real service: a service without workers is alive
// (/healthz) but not ready and says why; its in-process worker (real Blender) reports its slots,
// builds and heartbeat, shows a slot busy with a real render's task, to another workspace without
// the job, then idle, and stopped once it stops; `renderbridge worker` processes on "another
// machine" (the real CLI, reporting through the internal worker API) show up too, stopped after
// SIGTERM and lost 3 heartbeat periods after SIGKILL, with the
// service on SQLite here and on PostgreSQL on the scale stack.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerList } from '../../../shared/api/workers.js';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { submit, tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { api, errorBody } from '../../helpers/http.js';
import { startS3, type TestS3 } from '../../helpers/s3.js';
import { startTestService, TEST_STACK, type TestService } from '../../helpers/service.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const hasBlender = spawnSync('sh', ['-c', 'command -v blender']).status === 0;
if (!hasBlender) {
  if (process.env.CI === 'true') throw new Error('the workers tests need blender (Debian: apt-get install blender)');
  console.warn('skipping the workers tests that run a worker: blender missing (Debian: apt-get install blender)');
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function service(options: Parameters<typeof startTestService>[0]): Promise<TestService> {
  const svc = await startTestService(options);
  cleanups.push(() => svc.close());
  return svc;
}

type Workers = WorkerList['data'];
async function workers(svc: TestService, key = svc.apiKey): Promise<Workers> {
  const a = await api(svc.baseUrl, key)<WorkerList>('GET', '/workers');
  expect(a.status, JSON.stringify(a.body)).toBe(200);
  return a.body.data;
}

describe('workers extension and /readyz', () => {
  it('a service without workers is alive but not ready, and says what to do', async () => {
    const svc = await service({ workers: 0 });
    const health = await fetch(`${svc.origin}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${svc.origin}/readyz`);
    expect(ready.status).toBe(503);
    const body = errorBody({ status: ready.status, headers: ready.headers, body: await ready.json() });
    expect(body.name).toBe('SERVICE_NOT_READY');
    expect(body.details.map((d) => d.path)).toEqual([['workers']]);
    expect(body.details[0]!.message).toMatch(/no worker has a fresh heartbeat.*--workers 0.*renderbridge worker/);
    expect(body.metadata.checks).toMatchObject({
      database: { ok: true },
      queue: { ok: true },
      storage: { ok: true },
      workers: { ok: false },
    });

    const w = await workers(svc);
    expect(w.workers).toEqual([]);
    expect(w.queue).toEqual(
      ['validate', 'render', 'render-chunk', 'finalize'].map((kind) => ({ kind, queued: 0, running: 0 })),
    );
    const ext = await api(svc.baseUrl, svc.apiKey)<{ data: { extensions: { name: string; routes: string[] }[] } }>(
      'GET',
      '/extensions',
    );
    expect(ext.body.data.extensions.find((e) => e.name === 'workers')?.routes).toEqual(['listWorkers']);
    expect((await api(svc.baseUrl, undefined)('GET', '/workers')).status).toBe(401);
  });

  it.skipIf(!hasBlender)(
    'shows the in-process worker: slots, builds, a slot busy with a real render (nameless to another ' +
      'workspace), then idle, then stopped',
    async () => {
      const svc = await service({
        workers: 1,
        worker: { heartbeat: { intervalMs: 500 }, runtime: { heartbeatMs: 200, pollMs: 100 } },
      });
      const other = await svc.createApiKey('elsewhere');
      const ready = await waitUntil(
        '/readyz to answer 200',
        async () => ((await fetch(`${svc.origin}/readyz`)).status === 200 ? true : undefined),
        { timeoutMs: 20_000 },
      );
      expect(ready).toBe(true);
      const first = (await workers(svc)).workers;
      expect(first).toHaveLength(1);
      const me = first[0]!;
      expect(me).toMatchObject({ state: 'running', heartbeatIntervalSeconds: 0.5, gpus: [] });
      expect(me.slots.map((s) => [s.id, s.device.kind])).toEqual([
        ['control', 'control'],
        ['cpu-0', 'cpu'],
      ]);
      expect(me.builds[0]!.version).toMatch(/^\d+\.\d+/);
      expect(me.secondsSinceHeartbeat).toBeLessThan(30);

      const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
      const jobId = await submit(client, await buildFixture('basic'));
      await client.waitForStatus(jobId, ['validated'], { intervalMs: 150, timeoutMs: 90_000 });
      await client.renderJob(jobId, tinyRender('1-40', { sampleCount: 32, resolution: [160, 120] }));
      const busy = await waitUntil(
        'the render slot to show a task of the job',
        async () => {
          const slot = (await workers(svc)).workers[0]?.slots.find((s) => s.id === 'cpu-0');
          return slot?.tasks.some((t) => t.jobId === jobId) ? slot : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 100 },
      );
      expect(['busy', 'loading']).toContain(busy.state);
      expect(busy.tasks[0]).toMatchObject({ kind: 'render-chunk', jobId, jobName: 'basic.blend' });
      expect(busy.tasks[0]!.frames!.length).toBeGreaterThan(0);
      // Another workspace sees the slot working, but not on what.
      const seen = await waitUntil(
        'another workspace to see the slot busy',
        async () => {
          const slot = (await workers(svc, other)).workers[0]?.slots.find((s) => s.id === 'cpu-0');
          return slot && slot.tasks.length > 0 ? slot : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      expect(seen.tasks[0]).toMatchObject({
        kind: 'render-chunk',
        jobId: null,
        jobName: null,
        taskId: null,
        frames: null,
      });
      expect(seen.warmJobId).toBeNull();
      expect(JSON.stringify(await workers(svc, other))).not.toContain(jobId);

      await client.waitForStatus(jobId, ['completed'], { intervalMs: 200, timeoutMs: 240_000 });
      const idle = await waitUntil(
        'the slot to be idle again',
        async () => {
          const slot = (await workers(svc)).workers[0]?.slots.find((s) => s.id === 'cpu-0');
          return slot?.tasks.length === 0 ? slot : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(idle.state).not.toBe('busy');

      await svc.service.worker.stop();
      const stopped = await workers(svc);
      expect(stopped.workers[0]).toMatchObject({ state: 'stopped' });
      expect(stopped.workers[0]!.slots.every((s) => s.state === 'idle' && s.tasks.length === 0)).toBe(true);
      const notReady = await fetch(`${svc.origin}/readyz`);
      expect(notReady.status).toBe(503);
      expect(JSON.stringify(await notReady.json())).toMatch(/1 known worker\(s\) are lost or stopped/);
    },
    420_000,
  );

  it.skipIf(!hasBlender)(
    'shows a `renderbridge worker` on another machine, reporting through the internal worker API: stopped ' +
      'when it stops, lost when it dies',
    async () => {
      // On the embedded stack the service keeps SQLite but shares an S3 bucket with the worker. The
      // worker gets no queue URL on either stack: it claims its tasks through the worker API.
      let own: { s3: TestS3['settings'] } | undefined;
      if (TEST_STACK === 'embedded') {
        const s3 = await startS3();
        cleanups.push(() => s3.close());
        own = { s3: s3.settings };
        process.env.AWS_ACCESS_KEY_ID ??= s3.env.AWS_ACCESS_KEY_ID;
        process.env.AWS_SECRET_ACCESS_KEY ??= s3.env.AWS_SECRET_ACCESS_KEY;
      }
      const svc = await service({ workers: 0, ...own });
      const c = svc.config;
      const dir = await mkdtemp(path.join(tmpdir(), 'rb-remote-worker-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const launch = async (name: string) => {
        // Each machine its own token, as an operator hands them out: it names the worker.
        const { token } = await createWorkerToken(svc.service.ports.workerTokens, name);
        const args = ['--import', 'tsx', 'cli/index.ts', 'worker', '--service-url', svc.origin];
        args.push(
          '--s3-bucket',
          c.s3!.bucket,
          '--s3-endpoint',
          c.s3!.endpoint!,
          '--data-dir',
          path.join(dir, name),
          '--name',
          name,
          '--workers',
          '1',
        );
        const env = {
          ...process.env,
          RENDERBRIDGE_WORKER_TOKEN: token,
          AWS_ACCESS_KEY_ID: 'S3RVER',
          AWS_SECRET_ACCESS_KEY: 'S3RVER',
        };
        const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        cleanups.push(async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        });
        const shown = (state: string) =>
          waitUntil(
            `worker ${name} to show ${state} in GET /workers`,
            async () => {
              if (child.exitCode !== null && state === 'running') throw new Error(`the worker exited: ${stderr}`);
              return (await workers(svc)).workers.find((w) => w.name === name && w.state === state);
            },
            // Lost takes 3 heartbeat periods of 5 s.
            { timeoutMs: 90_000, intervalMs: 200 },
          );
        return { child, exited, shown };
      };

      const far = await launch('far-away');
      const seen = await far.shown('running');
      expect(seen.id).toBe(`far-away:${far.child.pid}`);
      expect(seen.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(seen.slots.map((s) => s.id)).toEqual(['control', 'cpu-0']);
      expect(seen.builds.length).toBeGreaterThan(0);
      expect((await fetch(`${svc.origin}/readyz`)).status).toBe(200);
      far.child.kill('SIGTERM');
      expect(await far.exited).toBe(0);
      expect((await workers(svc)).workers.find((w) => w.name === 'far-away')?.state).toBe('stopped');
      expect((await fetch(`${svc.origin}/readyz`)).status).toBe(503);

      // A machine that dies says nothing: it shows as lost once 3 heartbeats are missing.
      const dark = await launch('gone-dark');
      await dark.shown('running');
      expect((await fetch(`${svc.origin}/readyz`)).status).toBe(200);
      dark.child.kill('SIGKILL');
      const lost = await dark.shown('lost');
      // Shown to a tenth of a second, so 15.04 s reads 15.
      expect(lost.secondsSinceHeartbeat).toBeGreaterThanOrEqual(15);
      expect(lost.slots.every((s) => s.state === 'idle')).toBe(true);
      expect((await fetch(`${svc.origin}/readyz`)).status).toBe(503);
    },
    180_000,
  );
});
