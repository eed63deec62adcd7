// A remote worker without bucket keys: its storage goes through the service's worker API
// (RemoteWorkerStorage), which opens only the objects of the jobs the worker's token holds a task
// of, and signs short-lived S3 URLs for the bytes. Real service and s3rver; the real worker process
// is in keyless-worker-process.test.ts.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import { WorkerApiError } from '../../../service/worker-api/client.js';
import { WORKER_API_PREFIX } from '../../../service/worker-api/contract.js';
import { RemoteTaskQueue } from '../../../service/worker-api/remote-queue.js';
import { runForJob } from '../../../service/job-scope.js';
import { objectStorageConformance } from '../conformance/object-storage.js';
import { waitUntil } from '../../helpers/e2e.js';
import { createJob, type Call } from '../../helpers/flow.js';
import { startKeylessFarm, underJob, type KeylessFarm } from '../../helpers/keyless-worker.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { api, errorBody } from '../../helpers/http.js';

let farm: KeylessFarm;
let svc: TestService;
let call: Call;

beforeAll(async () => {
  farm = await startKeylessFarm();
  ({ svc, call } = farm);
});
afterAll(() => farm?.close());

const holdJob = (caller?: Call) => farm.holdJob(caller);

objectStorageConformance(
  'remote worker storage (worker API, S3 on s3rver)',
  async () => {
    const held = await holdJob();
    return { storage: underJob(held.storage, held.jobId), close: async () => undefined };
  },
  // Workers sign no URLs for clients; the service does (its own S3 adapter passes that test).
  { presign: false },
);

/** A raw storage call, as any HTTP client would make it. */
async function storageCall(token: string, route: string, body: unknown, origin = svc.origin) {
  const res = await fetch(`${origin}${WORKER_API_PREFIX}/storage/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

describe('what a worker token opens through the storage routes', () => {
  it("reads its job's upload and writes its outputs, but never another job's or workspace's objects", async () => {
    const a = await holdJob();
    const b = await holdJob();
    const other = await holdJob(api(svc.baseUrl, await svc.createApiKey('elsewhere')));
    const mine = `outputs/${a.workspaceId}/${a.jobId}/frames/f_0001.png`;
    const theirs = `outputs/${b.workspaceId}/${b.jobId}/frames/f_0001.png`;
    await runForJob(b.jobId, () => b.storage.put(theirs, Readable.from([Buffer.from('b frame')])));

    await runForJob(a.jobId, async () => {
      expect((await buffer(await a.storage.get(a.sourceKey))).toString()).toBe('BLENDER-v304 fake scene bytes');
      await a.storage.put(mine, Readable.from([Buffer.from('a frame')]));
      expect(await a.storage.list(`outputs/${a.workspaceId}/${a.jobId}`)).toEqual([{ key: mine, size: 7 }]);
    });

    // Another job's output, named under the worker's own job or under that job: as if it did not exist.
    for (const jobId of [a.jobId, b.jobId]) {
      for (const route of ['read', 'write', 'stat', 'delete']) {
        const r = await storageCall(a.token, route, { jobId, key: theirs });
        expect(r.status, `${route} for ${jobId}`).toBe(404);
        expect(errorBody(r).name).toBe('JOB_NOT_FOUND');
      }
    }
    expect(
      (await storageCall(a.token, 'list', { jobId: a.jobId, prefix: `outputs/${b.workspaceId}/${b.jobId}` })).status,
    ).toBe(404);
    // Another workspace's upload: missing too.
    const upload = await storageCall(a.token, 'read', { jobId: a.jobId, key: other.sourceKey });
    expect(upload.status).toBe(404);
    expect(errorBody(upload).name).toBe('OBJECT_NOT_FOUND');
    // Through the adapter, the worker sees the service's refusal.
    const err = await runForJob(a.jobId, () => a.storage.get(theirs)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerApiError);
    expect((err as WorkerApiError).status).toBe(404);
    expect((await buffer(await runForJob(b.jobId, () => b.storage.get(theirs)))).toString()).toBe('b frame');

    // Keys of no job, a parent folder, or the job's own upload written: refused with what to do.
    for (const [route, body] of [
      ['read', { key: 'secrets/service.env' }],
      ['list', { prefix: `outputs/${a.workspaceId}` }],
      ['delete-prefix', { prefix: 'staging' }],
      ['write', { key: a.sourceKey }],
      ['delete', { key: a.sourceKey }],
    ] as const) {
      const r = await storageCall(a.token, route, { jobId: a.jobId, ...body });
      expect(r.status, `${route} ${JSON.stringify(body)}`).toBe(403);
      expect(errorBody(r)).toMatchObject({ name: 'STORAGE_KEY_NOT_IN_JOB', metadata: { jobId: a.jobId } });
    }
    // An existing object is never replaced.
    const again = await storageCall(a.token, 'write', { jobId: a.jobId, key: mine });
    expect(again.status).toBe(409);
    expect(errorBody(again).name).toBe('OBJECT_ALREADY_EXISTS');
    expect((await buffer(await runForJob(a.jobId, () => a.storage.get(mine)))).toString()).toBe('a frame');
  });

  it("a requeued job's worker reads the outputs of the job it came from, and never writes them", async () => {
    const from = await createJob(call);
    expect((await call('POST', `/jobs/${from.id}/cancel`, {})).status).toBeLessThan(300);
    const requeued = await call<{ id: string }>('POST', `/jobs/${from.id}/requeue`, {});
    expect(requeued.status, JSON.stringify(requeued.body)).toBeLessThan(300);
    const jobId = requeued.body.id;
    const name = `w-${randomUUID().slice(0, 8)}`;
    const { token } = await createWorkerToken(svc.service.ports.workerTokens, name);
    const queue = new RemoteTaskQueue({ serviceUrls: [svc.origin], token, retryDelayMs: 50 });
    await waitUntil(
      `a task of ${jobId} claimed`,
      async () => (await queue.claim(`${name}:1`, ['validate', 'render'], 3_600_000))?.jobId === jobId,
    );
    const kept = `outputs/${svc.workspaceId}/${from.id}/kept/frames/rZl8wMDAxLnBuZw`;
    const stat = await storageCall(token, 'stat', { jobId, key: kept });
    expect(stat.status).toBe(200);
    expect(stat.body).toEqual({ data: null });
    expect(
      (await storageCall(token, 'list', { jobId, prefix: `outputs/${svc.workspaceId}/${from.id}/kept` })).body,
    ).toEqual({ data: [] });
    for (const route of ['write', 'delete']) {
      const r = await storageCall(token, route, { jobId, key: kept });
      expect(r.status, route).toBe(403);
      expect(errorBody(r).name).toBe('STORAGE_KEY_NOT_IN_JOB');
    }
    // A job outside the chain stays closed.
    const stranger = await createJob(call);
    expect(
      (await storageCall(token, 'stat', { jobId, key: `outputs/${svc.workspaceId}/${stranger.id}/kept/frames/x` }))
        .status,
    ).toBe(404);
  });

  it('signs URLs that S3 refuses once they expire', async () => {
    const a = await holdJob();
    const key = `logs/${a.workspaceId}/${a.jobId}/validate/a1-1.json`;
    await runForJob(a.jobId, () => a.storage.put(key, Readable.from([Buffer.from('{}')])));
    const read = await runForJob(a.jobId, () => a.storage.sign('read', key, 1));
    const refused = await waitUntil(
      'the signed GET to expire',
      async () => {
        const r = await fetch(read.url);
        const text = await r.text();
        return r.status === 200 ? undefined : { status: r.status, text };
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Request has expired');

    const late = `staging/${a.jobId}/frames/late.png`;
    const write = await runForJob(a.jobId, () => a.storage.sign('write', late, 1));
    await waitUntil('the signed PUT to pass its expiry', () => Date.now() > Date.parse(write.expiresAt) + 1000, {
      timeoutMs: 15_000,
    });
    const put = await fetch(write.url, { method: 'PUT', headers: write.headers, body: 'frame' });
    expect(put.status).toBe(403);
    expect(await put.text()).toContain('Request has expired');
    expect(await runForJob(a.jobId, () => a.storage.stat(late))).toBeUndefined();
  });

  it('answers malformed calls with 400 and the fields to fix, before any lookup', async () => {
    const a = await holdJob();
    for (const [route, body] of [
      ['read', { jobId: a.jobId, key: '../../etc/passwd' }],
      ['read', { jobId: a.jobId, key: `staging/${a.jobId}/../x` }],
      ['read', { jobId: 'not-a-job', key: `staging/${a.jobId}/x` }],
      ['read', { jobId: a.jobId, key: `staging/${a.jobId}/x`, expiresInSeconds: 86_400 }],
      ['write', { jobId: a.jobId, key: `staging/${a.jobId}/x`, bucket: 'other' }],
      ['list', { jobId: a.jobId, prefix: '' }],
      ['multipart/complete', { jobId: a.jobId, key: `staging/${a.jobId}/x`, uploadId: 'u', parts: [] }],
      ['multipart/part', { jobId: a.jobId, key: `staging/${a.jobId}/x`, uploadId: 'u', partNumber: 10_001 }],
    ] as const) {
      const r = await storageCall(a.token, route, body);
      expect(r.status, `${route} ${JSON.stringify(body)}`).toBe(400);
      expect(errorBody(r).name).toBe('VALIDATION_ERROR');
    }
  });

  it("a token that is not a worker's opens nothing", async () => {
    const a = await holdJob();
    const r = await storageCall(svc.apiKey, 'read', { jobId: a.jobId, key: a.sourceKey });
    expect(r.status).toBe(401);
  });
});

describe('a service that cannot serve keyless workers', () => {
  it('a worker without bucket keys stops at start and says what to change', async () => {
    // The embedded default: the service keeps files in its own folder and offers no storage routes.
    const files = await startTestService({});
    try {
      const name = `w-${randomUUID().slice(0, 8)}`;
      const { token } = await createWorkerToken(files.service.ports.workerTokens, name);
      expect((await storageCall(token, 'read', { jobId: randomUUID(), key: 'x' }, files.origin)).status).toBe(404);
      const env: Record<string, string> = { RENDERBRIDGE_WORKER_TOKEN: token };
      for (const [k, v] of Object.entries(process.env))
        if (v !== undefined && !/^(AWS_|RENDERBRIDGE_|DATABASE_URL|REDIS_URL)/.test(k)) env[k] = v;
      const dir = await farm.tempDir();
      // Spawned, not spawnSync: the service answers from this process.
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'cli/index.ts',
          'worker',
          '--service-url',
          files.origin,
          '--data-dir',
          dir,
          '--workers',
          '1',
        ],
        {
          cwd: path.resolve(import.meta.dirname, '../../..'),
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const status = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      const cli = { status, stderr };
      expect(cli.status, cli.stderr).not.toBe(0);
      expect(cli.stderr).toContain('offers workers no storage');
      expect(cli.stderr).toContain('--s3-bucket');
      expect(cli.stderr).not.toContain(token);
      // The same service on S3 is ready.
      await farm.holdJob().then((held) => held.storage.ready());
    } finally {
      await files.close();
    }
  }, 90_000);
});
