// A farm with every Blender artists use, each on its own worker: the machine's 3.4 beside the
// service, and a second worker with the 4.3 and 5.2 roots only. A scene saved by each version goes
// through the whole flow (upload, validate, render, outputs) on the build that can open it, and a
// farm with no fitting build refuses a file at validation with words, not with Blender's error.
// Real service, real workers, real Blender of each version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import type { Job } from '../../shared/api/job.js';
import type { StartedWorker } from '../../service/worker/start.js';
import { testBuild, usableBuilds } from '../helpers/blender-builds.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { fetchBytes } from '../helpers/e2e.js';
import { pngInfo } from '../helpers/png.js';
import { namedWorker, startSideWorker } from '../helpers/side-worker.js';

const builds = usableBuilds('the mixed-version farm');
const roots = builds.filter((b) => b.kind === 'root');

let svc: TestService;
let client: RenderJobClient;
let second: StartedWorker | undefined;

beforeAll(async () => {
  // The service's own worker: only the machine's 3.4 (PATH).
  svc = await startTestService({
    workers: 1,
    worker: namedWorker('w34'),
  });
  client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
  // A worker beside it (same machine, same data folder) with the newer builds and no PATH Blender.
  second = await startSideWorker(svc, 'wnew', {
    ...svc.config,
    workers: 1,
    blenderPaths: roots.map((r) => r.path),
    blenderFromPath: false,
  });
}, 180_000);
afterAll(async () => {
  await second?.stop();
  await svc?.close();
});

async function renderFile(file: string): Promise<{ job: Job; workers: Set<string> }> {
  const { slug } = await client.uploadProject(file);
  const created = await client.createJob({ slug });
  await client.validateJob(created.id, {});
  const validated = await client.waitForStatus(created.id, ['validated', 'failed'], {
    intervalMs: 200,
    timeoutMs: 120_000,
  });
  expect(validated.failedReason ?? null).toBeNull();
  await client.renderJob(created.id, {
    requestedRenderConfig: {
      colorManagementPreset: 'default',
      frameRanges: ['1-2'],
      resolution: [32, 24],
      sampleCount: 1,
    },
  });
  const job = await client.waitForStatus(created.id, ['completed', 'failed'], { intervalMs: 250, timeoutMs: 180_000 });
  const runs = await svc.service.ports.queue.jobTaskRuns(created.id);
  const workers = new Set(runs.filter((r) => r.kind === 'render-chunk').map((r) => (r.worker ?? '').split(':')[0]!));
  return { job, workers };
}

describe('a farm with Blender 3.4, 4.3 and 5.2', () => {
  it.each(builds.map((b) => [b.minor, b.path] as const))(
    'a scene saved by Blender %s validates and renders on that version',
    { timeout: 360_000 },
    async (minor, path) => {
      const file = await buildFixture('basic', { blender: path });
      const { job, workers } = await renderFile(file);
      expect(job.failedReason ?? null).toBeNull();
      expect(job.status).toBe('completed');
      expect(job.analysis?.output?.hostVersionForRender).toBe(minor);
      const codes = (job.analysis?.output?.analysisWarnings ?? []).map((w) => w.code);
      expect(codes).not.toContain('ANALYSIS_SECTION_FAILED');
      expect(codes).not.toContain('MISSING_FILES');
      expect(job.finalConfig?.hostVersionForRender).toMatch(new RegExp(`^${minor.replace('.', '\\.')}\\.\\d+$`));
      expect(job.finalConfig?.notes ?? '').not.toMatch(/asked for|does not have/);
      // The version's own worker rendered it: 3.4 on the service's, the roots on the other.
      expect([...workers]).toEqual([minor === '3.4' ? 'w34' : 'wnew']);
      const downloads = await client.getDownloads(job.id);
      expect(downloads.frames).toHaveLength(2);
      const png = pngInfo(await fetchBytes(downloads.frames[0]!));
      expect([png.width, png.height]).toEqual([32, 24]);
    },
  );

  it.skipIf(roots.length < 2)(
    'a 3.4 file asked for Blender 4.3 renders on 4.3; asked for 3.4 a 5.2 file still renders on 5.2, saying why',
    { timeout: 360_000 },
    async () => {
      const file34 = await buildFixture('basic');
      const { slug } = await client.uploadProject(file34);
      const job = await client.createJob({ slug });
      await client.validateJob(job.id, {});
      await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 120_000 });
      await client.renderJob(job.id, {
        requestedRenderConfig: {
          colorManagementPreset: 'default',
          hostVersionForRender: '4.3',
          frameRanges: ['1'],
          resolution: [32, 24],
          sampleCount: 1,
        },
      });
      const done = await client.waitForStatus(job.id, ['completed', 'failed'], { intervalMs: 250, timeoutMs: 180_000 });
      expect(done.status).toBe('completed');
      expect(done.finalConfig?.hostVersionForRender).toMatch(/^4\.3\./);

      const file52 = await buildFixture('basic', { blender: testBuild('5.2').path });
      const { slug: slug52 } = await client.uploadProject(file52);
      const job52 = await client.createJob({ slug: slug52 });
      await client.validateJob(job52.id, {});
      await client.waitForStatus(job52.id, ['validated'], { intervalMs: 200, timeoutMs: 120_000 });
      await client.renderJob(job52.id, {
        requestedRenderConfig: {
          colorManagementPreset: 'default',
          hostVersionForRender: '3.4',
          frameRanges: ['1'],
          resolution: [32, 24],
          sampleCount: 1,
        },
      });
      const done52 = await client.waitForStatus(job52.id, ['completed', 'failed'], {
        intervalMs: 250,
        timeoutMs: 180_000,
      });
      expect(done52.status).toBe('completed');
      expect(done52.finalConfig?.hostVersionForRender).toMatch(/^5\.2\./);
      expect(done52.finalConfig?.notes).toMatch(
        /Blender 3\.4 was asked for, but it cannot open a file saved with Blender 5\.2/,
      );
      expect(
        (done52.finalConfig?.analysisWarnings ?? done52.analysis?.output?.analysisWarnings ?? []).map((w) => w.code),
      ).toContain('BLENDER_VERSION_SUBSTITUTED');
    },
  );
});

describe('a farm without a build that opens the file', () => {
  it.skipIf(roots.length === 0)(
    "fails validation at once, naming the file's version and the farm's builds, and what to install",
    { timeout: 180_000 },
    async () => {
      const only34 = await startTestService({ workers: 1, worker: { runtime: { heartbeatMs: 200, pollMs: 100 } } });
      try {
        const c = new RenderJobClient({ baseUrl: only34.baseUrl, apiKey: only34.apiKey });
        const newest = roots[roots.length - 1]!;
        const file = await buildFixture('basic', { blender: newest.path });
        const { slug } = await c.uploadProject(file);
        const created = await c.createJob({ slug });
        await c.validateJob(created.id, {});
        const job = await c.waitForStatus(created.id, ['validated', 'failed'], { intervalMs: 200, timeoutMs: 60_000 });
        expect(job.status).toBe('failed');
        expect(job.failedReason).toMatchObject({ name: 'BLENDER_VERSION_UNAVAILABLE', type: 'VALIDATION_FAILED' });
        const message = String(job.failedReason?.errorDetails.message);
        expect(message).toMatch(new RegExp(`saved with Blender ${newest.minor.replace('.', '\\.')}`));
        expect(message).toMatch(/the farm has Blender 3\.4\.\d+\)/);
        expect(message).toMatch(/install Blender .* or newer .*--blender/);
        expect(message).not.toMatch(/not a blend file/i);
      } finally {
        await only34.close();
      }
    },
  );
});
