// Requeue (extension job-requeue) through the public API with real Blender, on both stacks
// (SQLite + files, and PostgreSQL + BullMQ + S3 where frames are staged in the bucket): a
// canceled job requeued renders only the frames it lacked and copies the rest, a completed job
// renders chosen frames again (also a project sent as blobs), requeues chain, identical requests
// (also at once) make one job, and another workspace sees nothing.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobTask } from '../../../shared/api/dashboard.js';
import type { Job } from '../../../shared/api/job.js';
import { buildFixture } from '../../helpers/fixtures.js';
import {
  fetchBytes,
  renderingPartway,
  startE2E,
  submit,
  tinyRender,
  validationOutcome,
  waitUntil,
  workDirOf,
  type E2E,
} from '../../helpers/e2e.js';
import { api, errorBody, type Answer } from '../../helpers/http.js';

/** Samples making a 64x48 frame take about half a second here, so a render can be stopped partway. */
const SLOW_SAMPLES = 384;
const ENDED = ['completed', 'failed', 'canceled'] as const;

let e2e: E2E;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  e2e = await startE2E({ worker: { runtime: { retryBaseMs: 100 } } });
  call = api(e2e.svc.baseUrl, e2e.svc.apiKey);
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
});

const requeue = (id: string, body?: unknown): Promise<Answer<Job>> => call<Job>('POST', `/jobs/${id}/requeue`, body);

async function renderedFrames(id: string): Promise<number[]> {
  const { body } = await call<{ data: JobTask[] }>('GET', `/jobs/${id}/tasks`);
  return body.data
    .filter((t) => t.kind === 'render-chunk' && t.state === 'done')
    .flatMap((t) => t.frames ?? [])
    .sort((a, b) => a - b);
}

/** The job's frame files by name, downloaded through its signed URLs. */
async function frameBytes(id: string): Promise<Map<string, Buffer>> {
  const d = await e2e.client.getDownloads(id);
  const out = new Map<string, Buffer>();
  for (const o of d.frameOutputs ?? []) out.set(o.fileName, await fetchBytes(o.url));
  return out;
}

describe('requeue a job canceled mid-render', () => {
  it('makes one new job for identical requests, which renders only the frames the old one lacked', async () => {
    const { client, svc } = e2e;
    const id = await renderingPartway(client, await buildFixture('basic'), '1-8', SLOW_SAMPLES);

    // A job still rendering is not requeued: it is not over.
    const running = await requeue(id, {});
    expect(running.status).toBe(409);
    expect(errorBody(running)).toMatchObject({ name: 'JOB_NOT_REQUEUEABLE', metadata: { jobId: id } });

    await client.cancelJob(id);
    // The worker keeps the finished frames, then removes the job's folder.
    await waitUntil("the canceled job's folder to go", () => !existsSync(workDirOf(svc, id)), { timeoutMs: 60_000 });

    // Two identical requests at once (`{}` and no body mean the same): one new job.
    const [a, b] = await Promise.all([requeue(id, {}), requeue(id)]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(a.body.id).toBe(b.body.id);
    const replay = a.status === 200 ? a : b;
    expect(replay.headers.get('x-idempotent-replay')).toBe('true');
    const newId = a.body.id;
    expect(newId).not.toBe(id);
    expect(a.body.workspaceId).toBe(svc.workspaceId);
    // Validated again, like any job.
    expect(['validating', 'validated', 'booting', 'rendering', 'finalizing', 'completed']).toContain(
      (await client.getJob(newId)).status,
    );
    const later = await requeue(id, {});
    expect(later.status).toBe(200);
    expect(later.body.id).toBe(newId);

    const done = await client.waitForStatus(newId, [...ENDED], { intervalMs: 200, timeoutMs: 240_000 });
    expect(done.status, JSON.stringify(done.failedReason)).toBe('completed');
    const old = await client.getJob(id);
    expect(old.status).toBe('canceled');
    expect(done.requestedConfig).toEqual(old.requestedConfig);
    expect(done.analysis?.id).not.toBe(old.analysis?.id);

    // Only the frames the canceled job had not finished were rendered; the rest were copied.
    const rendered = await renderedFrames(newId);
    const copied = [1, 2, 3, 4, 5, 6, 7, 8].filter((f) => !rendered.includes(f));
    expect(copied.length).toBeGreaterThanOrEqual(2);
    expect(rendered.length).toBeGreaterThan(0);
    expect((await client.getJobProgress(newId)).framesDone).toBe(8);
    const files = await frameBytes(newId);
    expect([...files.keys()].sort()).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((f) => `f_${String(f).padStart(4, '0')}.png`),
    );
    for (const bytes of files.values()) expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    expect(done.normalizedSeconds).toBeGreaterThan(0);

    // Linked both ways.
    const from = await call<{
      data: { jobId: string; requeuedFrom: unknown; requeues: { jobId: string; frames: string[] | null }[] };
    }>('GET', `/jobs/${id}/lineage`);
    expect(from.body.data).toMatchObject({ jobId: id, requeuedFrom: null, requeues: [{ jobId: newId, frames: null }] });
    const to = await call<{ data: { requeuedFrom: { jobId: string } | null; requeues: unknown[] } }>(
      'GET',
      `/jobs/${newId}/lineage`,
    );
    expect(to.body.data).toMatchObject({ requeuedFrom: { jobId: id, frames: null }, requeues: [] });

    const ext = await client.extensions();
    expect(ext.find((e) => e.name === 'job-requeue')).toMatchObject({
      version: 1,
      routes: ['requeueJob', 'getJobLineage'],
    });

    // Another workspace sees neither the job nor its lineage, and cannot requeue it.
    const rival = api(svc.baseUrl, await svc.createApiKey('rival studio'));
    const foreign = await rival('POST', `/jobs/${id}/requeue`, {});
    expect(foreign.status).toBe(404);
    expect(errorBody(foreign).name).toBe('JOB_NOT_FOUND');
    expect((await rival('GET', `/jobs/${newId}/lineage`)).status).toBe(404);
  }, 400_000);
});

describe('a chain of requeues', () => {
  it('passes on the frames of the first job through a requeue canceled before it rendered anything', async () => {
    const { client, svc } = e2e;
    const a = await renderingPartway(client, await buildFixture('basic'), '1-6', SLOW_SAMPLES);
    await client.cancelJob(a);
    await waitUntil("the canceled job's folder to go", () => !existsSync(workDirOf(svc, a)), { timeoutMs: 60_000 });

    const b = (await client.requeueJob(a)).job.id;
    expect((await client.cancelJob(b)).status).toBe('canceled');
    const { job: c, replay } = await client.requeueJob(b);
    expect(replay).toBe(false);
    expect(await client.getJobLineage(c.id)).toMatchObject({ requeuedFrom: { jobId: b }, requeues: [] });
    const done = await client.waitForStatus(c.id, [...ENDED], { intervalMs: 200, timeoutMs: 240_000 });
    expect(done.status, JSON.stringify(done.failedReason)).toBe('completed');
    const rendered = await renderedFrames(c.id);
    expect([1, 2, 3, 4, 5, 6].filter((f) => !rendered.includes(f)).length).toBeGreaterThanOrEqual(2);
    expect((await frameBytes(c.id)).size).toBe(6);
  }, 400_000);
});

describe('re-render chosen frames of a completed job', () => {
  it('renders only those frames and copies the others byte for byte; its outputs are complete', async () => {
    const { client } = e2e;
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender('1-4'));
    expect((await client.waitForStatus(id, [...ENDED], { intervalMs: 200, timeoutMs: 120_000 })).status).toBe(
      'completed',
    );

    const noFrames = await requeue(id, {});
    expect(noFrames.status).toBe(409);
    expect(errorBody(noFrames).name).toBe('JOB_NOT_REQUEUEABLE');
    const outside = await requeue(id, { frames: '3-9' });
    expect(outside.status).toBe(400);
    expect(errorBody(outside)).toMatchObject({ name: 'VALIDATION_ERROR', details: [{ path: ['body', 'frames'] }] });
    expect(errorBody(outside).details?.[0]?.message).toContain('5-9');

    const first = await requeue(id, { frames: ['2'] });
    expect(first.status).toBe(201);
    // The same frames spelt another way are the same request.
    const again = await requeue(id, { frames: '2' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);

    const newId = first.body.id;
    const done = await client.waitForStatus(newId, [...ENDED], { intervalMs: 200, timeoutMs: 180_000 });
    expect(done.status, JSON.stringify(done.failedReason)).toBe('completed');
    expect(await renderedFrames(newId)).toEqual([2]);
    const before = await frameBytes(id);
    const after = await frameBytes(newId);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const name of ['f_0001.png', 'f_0003.png', 'f_0004.png'])
      expect(after.get(name)!.equals(before.get(name)!), name).toBe(true);
    expect(after.get('f_0002.png')!.subarray(1, 4).toString()).toBe('PNG');
    const downloads = await client.getDownloads(newId);
    expect(downloads.transforms.framesZip).not.toBeNull();
    const lineage = await call<{ data: { requeues: { jobId: string; frames: string[] | null }[] } }>(
      'GET',
      `/jobs/${id}/lineage`,
    );
    expect(lineage.body.data.requeues).toEqual([expect.objectContaining({ jobId: newId, frames: ['2'] })]);
  }, 400_000);
});

describe('a project sent as blobs', () => {
  it('is requeued from the same blobs, without a new upload', async () => {
    const { client } = e2e;
    expect(await client.hasExtension('content-addressed-uploads')).toBe(true);
    const source = await buildFixture('basic');
    const bytes = await readFile(source);
    const file = {
      path: 'shots/basic.blend',
      source,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      compression: 'gzip' as const,
    };
    const { upload } = await client.uploadBlobs([file], { fileName: 'project.zip' });
    const id = (await client.createJob({ slug: upload.slug })).id;
    await client.validateJob(id, {});
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender('1-3'));
    expect((await client.waitForStatus(id, [...ENDED], { intervalMs: 200, timeoutMs: 120_000 })).status).toBe(
      'completed',
    );

    const { job } = await client.requeueJob(id, { frames: '3' });
    const done = await client.waitForStatus(job.id, [...ENDED], { intervalMs: 200, timeoutMs: 180_000 });
    expect(done.status, JSON.stringify(done.failedReason)).toBe('completed');
    expect(done.analysis?.config?.pathToFileForRender).toBe('shots/basic.blend');
    expect(await renderedFrames(job.id)).toEqual([3]);
    const before = await frameBytes(id);
    const after = await frameBytes(job.id);
    for (const name of ['f_0001.png', 'f_0002.png'])
      expect(after.get(name)!.equals(before.get(name)!), name).toBe(true);
    expect(after.has('f_0003.png')).toBe(true);
  }, 400_000);
});
