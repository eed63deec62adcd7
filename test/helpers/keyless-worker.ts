// A service on S3 (s3rver) whose workers hold no bucket key, and worker tokens holding a task of a
// job, for the tests of the worker API's storage routes (RemoteWorkerStorage).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { createWorkerToken } from '../../service/domain/worker-tokens.js';
import type { ObjectStorage } from '../../service/ports/storage.js';
import { RemoteWorkerJobs } from '../../service/worker-api/remote-jobs.js';
import { RemoteTaskQueue } from '../../service/worker-api/remote-queue.js';
import { RemoteWorkerStorage, type RemoteWorkerStorageOptions } from '../../service/worker-api/remote-storage.js';
import type { RenderJobClient } from '../../shared/client/client.js';
import { waitUntil } from './e2e.js';
import { buildFixture } from './fixtures.js';
import { createJob, type Call } from './flow.js';
import { api } from './http.js';
import { startS3, type TestS3 } from './s3.js';
import { startTestService, type TestService } from './service.js';

export interface Held {
  token: string;
  jobId: string;
  sourceKey: string;
  workspaceId: string;
  storage: RemoteWorkerStorage;
}

export interface KeylessFarm {
  svc: TestService;
  s3: TestS3;
  call: Call;
  /** A new worker token holding the validate task of a new job of `caller`'s workspace (a lease of an hour). */
  holdJob(caller?: Call, storage?: Partial<RemoteWorkerStorageOptions>): Promise<Held>;
  tempDir(): Promise<string>;
  close(): Promise<void>;
}

export interface KeylessFarmOptions {
  /**
   * The S3 endpoint the service (and so its signed URLs) uses, given s3rver's: e.g. a proxy in
   * front of it. Default s3rver's.
   */
  endpoint?: (s3rver: string) => Promise<string>;
}

export async function startKeylessFarm(opts: KeylessFarmOptions = {}): Promise<KeylessFarm> {
  const s3 = await startS3();
  // The service's own S3 credentials (the default provider chain reads them); workers get none.
  process.env.AWS_ACCESS_KEY_ID ??= s3.env.AWS_ACCESS_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY ??= s3.env.AWS_SECRET_ACCESS_KEY;
  const endpoint = opts.endpoint ? await opts.endpoint(s3.settings.endpoint!) : s3.settings.endpoint;
  const svc = await startTestService({
    s3: { ...s3.settings, ...(endpoint ? { endpoint } : {}) },
    rateLimitMax: 10_000,
    workerApiRateLimitMax: 100_000,
  });
  const call = api(svc.baseUrl, svc.apiKey);
  const dirs: string[] = [];
  const tempDir = async () => {
    const d = await mkdtemp(path.join(tmpdir(), 'rb-keyless-'));
    dirs.push(d);
    return d;
  };
  const holdJob = async (caller: Call = call, opts: Partial<RemoteWorkerStorageOptions> = {}): Promise<Held> => {
    const name = `w-${randomUUID().slice(0, 8)}`;
    const { token } = await createWorkerToken(svc.service.ports.workerTokens, name);
    const job = await createJob(caller);
    expect((await caller('POST', `/jobs/${job.id}/validate`, {})).status).toBeLessThan(300);
    const queue = new RemoteTaskQueue({ serviceUrls: [svc.origin], token, retryDelayMs: 50 });
    await waitUntil(
      `the validate task of ${job.id} claimed`,
      async () => (await queue.claim(`${name}:1`, ['validate'], 3_600_000))?.jobId === job.id,
    );
    const rec = await new RemoteWorkerJobs({ serviceUrls: [svc.origin], token }).getById(job.id);
    const storage = new RemoteWorkerStorage({
      serviceUrls: [svc.origin],
      token,
      retryDelayMs: 50,
      spoolDir: path.join(await tempDir(), 'spool'),
      ...opts,
    });
    return { token, jobId: job.id, sourceKey: rec!.internal.sourceKey, workspaceId: job.workspaceId, storage };
  };
  return {
    svc,
    s3,
    call,
    holdJob,
    tempDir,
    close: async () => {
      await svc.close();
      await s3.close();
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

/** The storage seen under the job's own `staging/<job>/` folder, so the conformance suite's keys are the job's. */
export function underJob(s: ObjectStorage, jobId: string): ObjectStorage {
  const base = `staging/${jobId}`;
  const k = (key: string) => `${base}/${key}`;
  return {
    presignPut: (key, o) => s.presignPut(k(key), o),
    presignGet: (key, o) => s.presignGet(k(key), o),
    put: (key, body, o) => s.put(k(key), body, o),
    putFile: (key, file, o) => s.putFile(k(key), file, o),
    persist: (keys) => s.persist(keys.map(k)),
    get: (key) => s.get(k(key)),
    stat: (key) => s.stat(k(key)),
    delete: (key) => s.delete(k(key)),
    deletePrefix: (prefix) => s.deletePrefix(k(prefix)),
    list: async (prefix) => (await s.list(k(prefix))).map((o) => ({ ...o, key: o.key.slice(base.length + 1) })),
  };
}

/** Uploads the basic fixture and validates it through the public API; the job id once `validated`. */
export async function validatedBasicJob(client: RenderJobClient): Promise<string> {
  const target = await client.uploadProject(await buildFixture('basic'));
  const job = await client.createJob({ slug: target.slug });
  await client.validateJob(job.id, {});
  const v = await client.waitForStatus(job.id, ['validated', 'failed'], { intervalMs: 200, timeoutMs: 120_000 });
  expect(v.status, JSON.stringify(v)).toBe('validated');
  return job.id;
}
