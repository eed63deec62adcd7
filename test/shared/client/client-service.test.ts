// The client against the real reference service: upload, jobs, pagination, waiting, errors.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../../shared/api/job.js';
import type { JobStatus } from '../../../shared/job-status.js';
import { ApiError, JobStoppedError } from '../../../shared/client/errors.js';
import { RenderJobClient } from '../../../shared/client/client.js';
import { collectOutputs, videoLinks, zipLinks } from '../../../shared/client/downloads.js';
import { startTestService } from '../../helpers/service.js';

type Service = Awaited<ReturnType<typeof startTestService>>;

let svc: Service;
let client: RenderJobClient;
let dir: string;
let blendPath: string;
const BLEND_SIZE = 256 * 1024;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rb-client-service-'));
  blendPath = join(dir, 'scene.blend');
  // A .blend header followed by filler: enough for upload and job creation, which do not parse it.
  await writeFile(blendPath, Buffer.concat([Buffer.from('BLENDER-v402'), randomBytes(BLEND_SIZE - 12)]));
  svc = await startTestService();
  client = clientFor(svc.apiKey);
});

afterAll(async () => {
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function clientFor(apiKey: string): RenderJobClient {
  return new RenderJobClient({ baseUrl: svc.baseUrl, apiKey, baseDelayMs: 10, maxDelayMs: 1000 });
}

/** The spec's flow up to a created job: POST /uploads, PUT the bytes, POST /jobs. */
async function newJob(c: RenderJobClient = client): Promise<Job> {
  const target = await c.uploadProject(blendPath);
  return c.createJob({ slug: target.slug });
}

/** Moves a job along as the worker runtime would (the only other writer of job state). */
async function workerMoves(id: string, path: JobStatus[]): Promise<void> {
  for (let i = 1; i < path.length; i++) {
    const [from, to] = [path[i - 1], path[i]];
    if (!from || !to || !(await svc.service.ports.jobs.transition(id, [from], to)))
      throw new Error(`cannot move ${id} to ${to}`);
  }
}

async function apiError(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('client against the reference service', () => {
  it('uploads a project with progress and creates a job from it', async () => {
    const progress: number[] = [];
    const target = await client.uploadProject(blendPath, { onProgress: (sent) => progress.push(sent) });
    expect(progress.at(-1)).toBe(BLEND_SIZE);
    expect(Date.parse(target.expiresAt)).toBeGreaterThan(Date.now());

    const job = await client.createJob({ slug: target.slug });
    expect(job.status).toBe('created');
    expect(job.workspaceId).toBe(svc.workspaceId);
    const read = await client.getJob(job.id);
    expect(read.id).toBe(job.id);
    expect(read.status).toBe('created');

    const counters = await client.getJobProgress(job.id);
    expect(counters.jobId).toBe(job.id);
    expect(counters.framesDone).toBeNull();
    // A slug creates one job only.
    expect((await apiError(client.createJob({ slug: target.slug }))).errorName).toBe('UPLOAD_ALREADY_USED');
  });

  it('iterates every job of every page, with and without a status filter', async () => {
    // A fresh workspace, so the count does not depend on the other tests.
    const own = clientFor(await svc.createApiKey(`pages-${randomUUID()}`));
    const created: Job[] = [];
    for (let i = 0; i < 5; i++) created.push(await newJob(own));

    const first = await own.listJobs({ pageSize: 2 });
    expect(first.pagination).toMatchObject({ page: 1, pageSize: 2, total: 5, totalPages: 3 });
    const ids: string[] = [];
    for await (const job of own.iterateJobs({ pageSize: 2 })) ids.push(job.id);
    expect(ids).toHaveLength(5);
    expect(new Set(ids)).toEqual(new Set(created.map((j) => j.id)));

    const target = created[2];
    if (!target) throw new Error('no job created');
    await own.cancelJob(target.id);
    const canceled: string[] = [];
    for await (const job of own.iterateJobs({ status: 'canceled', pageSize: 1 })) canceled.push(job.id);
    expect(canceled).toEqual([target.id]);
  });

  it('keeps workspaces apart', async () => {
    const job = await newJob();
    const other = clientFor(await svc.createApiKey(`other-${randomUUID()}`));
    expect((await apiError(other.getJob(job.id))).status).toBe(404);
    const seen: string[] = [];
    for await (const j of other.iterateJobs()) seen.push(j.id);
    expect(seen).not.toContain(job.id);
  });

  it('waits for a status, and stops with JobStoppedError when the job is canceled', async () => {
    const job = await newJob();
    expect((await client.waitForStatus(job.id, ['created'])).id).toBe(job.id);

    const validating = await client.validateJob(job.id, {});
    expect(validating.status).toBe('validating');
    expect((await client.listProgress()).map((p) => p.jobId)).toContain(job.id);

    const seen: string[] = [];
    let cancel: Promise<Job> | undefined;
    const err = await client
      .waitForStatus(job.id, ['completed'], {
        intervalMs: 50,
        timeoutMs: 20_000,
        onUpdate: (j) => {
          seen.push(j.status);
          cancel ??= client.cancelJob(job.id);
        },
      })
      .catch((e: unknown) => e);
    expect((await cancel)?.status).toBe('canceled');
    expect(err).toBeInstanceOf(JobStoppedError);
    expect((err as JobStoppedError).status).toBe('canceled');
    expect(seen[0]).toBe('validating');
    expect(seen.at(-1)).toBe('canceled');
  });

  it('answers typed errors for refused calls', async () => {
    const job = await newJob();
    expect((await apiError(client.getJob(randomUUID()))).errorName).toBe('JOB_NOT_FOUND');
    expect(
      (await apiError(client.renderJob(job.id, { requestedRenderConfig: { colorManagementPreset: 'default' } })))
        .errorName,
    ).toBe('RENDER_NOT_ALLOWED');
    await client.validateJob(job.id);
    const again = await apiError(client.validateJob(job.id));
    expect(again.status).toBe(400);
    expect(again.errorName).toBe('VALIDATE_NOT_ALLOWED');
    await client.cancelJob(job.id);
    const cancelAgain = await apiError(client.cancelJob(job.id));
    expect(cancelAgain.status).toBe(409);
    expect(cancelAgain.errorName).toBe('CANCEL_NOT_ALLOWED');

    expect((await apiError(client.createJob({ slug: 'no-such-slug' }))).errorName).toBe('UPLOAD_NOT_FOUND');
    const invalid = await apiError(client.createUpload({ fileName: 'scene.zip', fileType: 'blend' }));
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.length).toBeGreaterThan(0);

    const stranger = clientFor('rb_live_not-a-real-key');
    const unauthorized = await apiError(stranger.listJobs());
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.errorName).toBe('UNAUTHORIZED');
  });

  it('resolves waitForStatus when the worker validates the job, then tells a render start from a replay', async () => {
    const job = await newJob();
    await client.validateJob(job.id);
    const seen: JobStatus[] = [];
    const validated = await client.waitForStatus(job.id, ['validated'], {
      intervalMs: 50,
      timeoutMs: 20_000,
      onUpdate: (j) => {
        // The first poll sees validating; the worker finishes meanwhile.
        if (seen.push(j.status) === 1) void workerMoves(job.id, ['validating', 'validated']);
      },
    });
    expect(validated.status).toBe('validated');
    expect(seen[0]).toBe('validating');

    const body = { requestedRenderConfig: { colorManagementPreset: 'default' as const, frameRanges: ['1-10'] } };
    const first = await client.renderJob(job.id, body);
    expect(first).toMatchObject({ replay: false, job: { id: job.id, status: 'booting' } });
    const again = await client.renderJob(job.id, body);
    expect(again.replay).toBe(true);
    expect(again.job.id).toBe(job.id);
  });

  it('reads downloads in every state with the helpers, and the URLs serve the bytes', async () => {
    const job = await newJob();
    const before = await client.getDownloads(job.id);
    expect(collectOutputs(before)).toEqual([]);
    expect(zipLinks(before.transforms.framesZip)).toEqual({ state: 'unavailable', urls: [] });

    await client.validateJob(job.id);
    await workerMoves(job.id, ['validating', 'validated']);
    await client.renderJob(job.id, { requestedRenderConfig: { colorManagementPreset: 'default', videoOutput: true } });
    const during = await client.getDownloads(job.id);
    expect(zipLinks(during.transforms.framesZip)).toEqual({ state: 'pending', urls: [] });
    expect(videoLinks(during.transforms.video)).toMatchObject([
      { key: 'mp4', format: 'mp4', expected: true, available: false, url: null },
    ]);

    // Publish outputs as the worker's finalize step does, then complete.
    await workerMoves(job.id, ['booting', 'rendering', 'finalizing']);
    const frame = randomBytes(3000);
    const base = `outputs/${job.workspaceId}/${job.id}`;
    await svc.service.ports.storage.put(`${base}/frames/f_0001.png`, Readable.from([frame]));
    await svc.service.ports.jobs.update(
      job.id,
      {},
      {
        outputs: {
          frames: [
            {
              key: `${base}/frames/f_0001.png`,
              fileName: 'f_0001.png',
              view: null,
              outputType: 'frame',
              size: frame.length,
            },
          ],
          composites: [],
          framesZipKey: null,
          compositesZipKey: null,
          videos: [],
        },
      },
    );
    await workerMoves(job.id, ['finalizing', 'completed']);

    const done = await client.getDownloads(job.id);
    const outputs = collectOutputs(done);
    expect(outputs).toMatchObject([{ fileName: 'f_0001.png', outputType: 'frame', view: null, legacy: false }]);
    const res = await fetch(outputs[0]?.url ?? '');
    expect(Buffer.from(await res.arrayBuffer()).equals(frame)).toBe(true);
    // The legacy list names the same file.
    expect(collectOutputs({ frames: done.frames, compositeNodes: done.compositeNodes })).toMatchObject([
      { fileName: 'f_0001.png', legacy: true },
    ]);
  });
});
