// A real `renderbridge worker` process given only the service URL and its own token: no S3 key,
// no queue or database URL. Its files go through the worker API's storage routes on URLs the
// service signs for the job of each task; it renders, requeues, keeps the frames of a canceled
// job and assembles a project sent as blobs (real service, real s3rver, real Blender).
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { renderingPartway, tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { startKeylessFarm, type KeylessFarm } from '../../helpers/keyless-worker.js';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';
import { blenderPresent } from '../../helpers/blender-present.js';

const ENDED = ['completed', 'failed', 'canceled'] as const;
const blender = blenderPresent('the keyless remote worker test');

let farm: KeylessFarm;
let client: RenderJobClient;
let worker: WorkerProcess | undefined;
const name = `keyless-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  if (!blender) return;
  farm = await startKeylessFarm();
  client = new RenderJobClient({ baseUrl: farm.svc.baseUrl, apiKey: farm.svc.apiKey });
  worker = await startWorkerProcess(farm, { name });
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await farm?.close();
});

/** The test's failure with the worker's last words, which say why a job failed on it. */
async function withWorkerLog(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    console.error(worker?.stderr().slice(-4000));
    throw err;
  }
}

const renderedFrames = async (id: string) =>
  (await farm.svc.service.ports.queue.jobTaskRuns(id))
    .filter((r) => r.kind === 'render-chunk' && r.state === 'done')
    .flatMap((r) => r.frames ?? [])
    .sort((a, b) => a - b);
const bytesOf = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

describe.skipIf(!blender)('`renderbridge worker` with only the service URL and its token', () => {
  it(
    'renders a job end to end, then a requeue of one frame copies the other from the completed job',
    () =>
      withWorkerLog(async () => {
        const target = await client.uploadProject(await buildFixture('basic'));
        const job = await client.createJob({ slug: target.slug });
        await client.validateJob(job.id, {});
        await client.waitForStatus(job.id, ['validated', 'failed'], { intervalMs: 200, timeoutMs: 120_000 });
        await client.renderJob(job.id, tinyRender('1-2'));
        const done = await client.waitForStatus(job.id, [...ENDED], { intervalMs: 200, timeoutMs: 180_000 });
        expect(done.status, JSON.stringify(done)).toBe('completed');
        const frames = (await client.getDownloads(job.id)).frameOutputs ?? [];
        expect(frames.map((f) => f.fileName)).toEqual(['f_0001.png', 'f_0002.png']);
        expect((await fetch(frames[0]!.url)).status).toBe(200);
        // The worker stored a thumbnail of each frame through its scoped storage (S3 on URLs the service signed).
        const thumbs = await client.listJobThumbnails(job.id);
        expect(thumbs.data.thumbnails.map((t) => t.frame)).toEqual([1, 2]);
        expect((await fetch(thumbs.data.thumbnails[0]!.url)).status).toBe(200);
        // Every byte went through URLs the service signed for this job, and every task ran on this worker.
        const seen = farm.svc.logs.join('');
        for (const route of ['read', 'write', 'list']) expect(seen).toContain(`${WORKER_API_PREFIX}/storage/${route}`);
        expect(
          (await farm.svc.service.ports.queue.jobTaskRuns(job.id)).every((r) => r.worker?.startsWith(`${name}:`)),
        ).toBe(true);

        // Frame 2 again: frame 1 is read from the completed job's outputs (its requeue chain, read only).
        const requeued = await farm.call<{ id: string }>('POST', `/jobs/${job.id}/requeue`, { frames: ['2'] });
        expect(requeued.status).toBe(201);
        const again = await client.waitForStatus(requeued.body.id, [...ENDED], { intervalMs: 200, timeoutMs: 180_000 });
        expect(again.status, JSON.stringify(again)).toBe('completed');
        const copied = (await client.getDownloads(requeued.body.id)).frameOutputs ?? [];
        expect(copied.map((f) => f.fileName)).toEqual(['f_0001.png', 'f_0002.png']);
        expect((await bytesOf(copied[0]!.url)).equals(await bytesOf(frames[0]!.url))).toBe(true);
        expect(await renderedFrames(requeued.body.id)).toEqual([2]);
      }),
    360_000,
  );

  it(
    'keeps the finished frames of a job canceled mid-render, and its requeue renders only the rest',
    () =>
      withWorkerLog(async () => {
        const id = await renderingPartway(client, await buildFixture('basic'), '1-8', 384);
        await client.cancelJob(id);
        // The worker keeps the finished frames under the job's outputs
        // (through the storage routes), then removes its folder.
        await waitUntil("the canceled job's folder to go", () => !existsSync(path.join(worker!.dataDir, 'work', id)), {
          timeoutMs: 60_000,
        });
        const requeued = await farm.call<{ id: string }>('POST', `/jobs/${id}/requeue`, {});
        expect(requeued.status).toBe(201);
        const done = await client.waitForStatus(requeued.body.id, [...ENDED], { intervalMs: 200, timeoutMs: 240_000 });
        expect(done.status, JSON.stringify(done.failedReason)).toBe('completed');
        const rendered = await renderedFrames(requeued.body.id);
        expect(8 - rendered.length, `rendered again: ${rendered.join(',')}`).toBeGreaterThanOrEqual(2);
        const files = (await client.getDownloads(requeued.body.id)).frameOutputs ?? [];
        expect(files.map((f) => f.fileName)).toEqual(
          [1, 2, 3, 4, 5, 6, 7, 8].map((f) => `f_${String(f).padStart(4, '0')}.png`),
        );
      }),
    400_000,
  );

  it(
    "assembles a project sent as blobs: its project document and its workspace's blobs, read only",
    () =>
      withWorkerLog(async () => {
        const blend = await buildFixture('basic');
        const bytes = await readFile(blend);
        const file = {
          path: 'scene.blend',
          source: blend,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          size: bytes.length,
          compression: 'none' as const,
        };
        const { upload } = await client.uploadBlobs([file], { fileName: 'project.zip' });
        const job = await client.createJob({ slug: upload.slug });
        await client.validateJob(job.id, {});
        const validated = await client.waitForStatus(job.id, ['validated', 'failed'], {
          intervalMs: 200,
          timeoutMs: 120_000,
        });
        expect(validated.status, JSON.stringify(validated)).toBe('validated');
      }),
    240_000,
  );
});
