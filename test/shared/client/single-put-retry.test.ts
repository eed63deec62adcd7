// The spec's single PUT against the real service, its bytes through a real proxy that cuts the
// connection mid-upload: on S3 (presigned PUTs past the service: the spec alone) the client sends
// the file again from the start; on the service's file storage, which offers resumable-uploads,
// it sends only what the service lacks (single-put-resume.test.ts has more). Either way to a new
// upload target once the old one is about to expire, and never after a 4xx answer.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import { ApiError, NetworkError } from '../../../shared/client/errors.js';
import type { UploadRetry } from '../../../shared/client/single-put.js';
import { startProxiedService, type ProxiedService, type StorageKind } from '../../helpers/proxied-service.js';
import { startTestService, type TestService } from '../../helpers/service.js';

const SIZE = 3 * 1024 * 1024 + 17;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-single-put-'));
  file = path.join(dir, 'scene.blend');
  // A .blend header, then bytes that do not compress: the proxy sees every byte.
  await writeFile(file, Buffer.concat([Buffer.from('BLENDER-v304'), randomBytes(SIZE - 12)]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let env: ProxiedService | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

function clientOf(e: ProxiedService, maxRetries = 5, reconnectPatienceMs?: number): RenderJobClient {
  // Short back-off: the test is about what is sent again, not about how long the client waits.
  return new RenderJobClient({
    baseUrl: e.baseUrl,
    apiKey: e.svc.apiKey,
    baseDelayMs: 50,
    maxDelayMs: 200,
    maxRetries,
    ...(reconnectPatienceMs === undefined ? {} : { reconnectPatienceMs }),
  });
}

describe.each<StorageKind>(['files', 's3'])('single PUT retried (%s storage)', (storage) => {
  it(
    `sends the file again ${storage === 's3' ? 'from the start' : 'from where the service got to'} after the ` +
      `connection is cut mid-upload, and the job is created`,
    async () => {
      env = await startProxiedService(storage, {}, 'storage');
      env.proxy.cut({ request: env.uploadPut, afterBytes: 1024 * 1024 });
      const client = clientOf(env);
      const retries: UploadRetry[] = [];
      const progress: number[] = [];
      const target = await client.uploadProject(file, {
        onRetry: (r) => retries.push(r),
        onProgress: (sent) => progress.push(sent),
      });

      expect(env.proxy.cuts()).toBe(1);
      expect(retries).toHaveLength(1);
      expect(retries[0]?.error).toBeInstanceOf(NetworkError);
      // The target is valid for hours: the retry goes to the same one.
      expect(retries[0]?.newTarget).toBe(false);
      expect(env.proxy.requests().filter((r) => r.startsWith('PUT'))).toHaveLength(2);
      if (storage === 's3') {
        // The cut part went once, then the whole file again; progress starts over.
        expect(retries[0]?.fromByte).toBe(0);
        expect(env.proxy.up()).toBeGreaterThan(SIZE + 1024 * 1024 - 1);
        const restart = progress.findIndex((p, i) => i > 0 && p < (progress[i - 1] as number));
        expect(restart).toBeGreaterThan(0);
      } else {
        // The service kept what reached it (a reset loses what its socket had not read yet, more on a
        // loaded machine): the retry sends the rest from there, not the whole file again.
        const from = retries[0]?.fromByte ?? 0;
        expect(from).toBeGreaterThan(0);
        // The cut MiB, then the file from `from` on (requests' headers aside).
        expect(env.proxy.up()).toBeLessThan(1024 * 1024 + (SIZE - from) + 64 * 1024);
      }
      expect(progress.at(-1)).toBe(SIZE);

      const job = await client.createJob({ slug: target.slug });
      expect(job.status).toBe('created');
    },
  );

  it('asks for a new upload target if the old one expired before the retry; the first slug stays dead', async () => {
    // 30 s targets: less than the client's 60 s margin, so any retry goes to a new target.
    env = await startProxiedService(storage, { uploadUrlTtlSeconds: 30 }, 'storage');
    env.proxy.cut({ request: env.uploadPut, afterBytes: 512 * 1024 });
    const client = clientOf(env);
    const slugs: string[] = [];
    const createUpload = client.createUpload.bind(client);
    client.createUpload = async (body, options) => {
      const t = await createUpload(body, options);
      slugs.push(t.slug);
      return t;
    };
    const retries: UploadRetry[] = [];
    const target = await client.uploadProject(file, { onRetry: (r) => retries.push(r) });

    expect(retries.map((r) => r.newTarget)).toEqual([true]);
    expect(slugs).toHaveLength(2);
    expect(target.slug).toBe(slugs[1]);
    const job = await client.createJob({ slug: target.slug });
    expect(job.status).toBe('created');
    // s3rver keeps the bytes of a cut PUT as an object (S3 itself refuses a body shorter than its
    // Content-Length), so only the file storage can show that the first slug never completed.
    if (storage === 'files') {
      const first = await client.createJob({ slug: slugs[0] as string }).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(ApiError);
      expect((first as ApiError).errorName).toBe('UPLOAD_INCOMPLETE');
    }
  });

  it('gives up with the network error after maxRetries retries (without patience for a lost connection)', async () => {
    env = await startProxiedService(storage, {}, 'storage');
    env.proxy.cut({ request: env.uploadPut, afterBytes: 256 * 1024, times: 10 });
    const client = clientOf(env, 2, 0);
    const retries: UploadRetry[] = [];
    const err = await client.uploadProject(file, { onRetry: (r) => retries.push(r) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(retries).toHaveLength(2);
    expect(env.proxy.cuts()).toBe(3);
  });
});

describe('single PUT not retried on a 4xx answer', () => {
  // On files only: the service's storage route enforces maxUploadBytes; s3rver takes any size.
  // Straight to the service, no proxy: the service answers 413 and closes while the body is
  // still coming, and an extra hop can lose that answer to the reset that follows.
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('fails at once with 413 PAYLOAD_TOO_LARGE and sends the PUT once', async () => {
    svc = await startTestService({ maxUploadBytes: 1024 * 1024 });
    const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey, baseDelayMs: 50, maxDelayMs: 200 });
    const retries: UploadRetry[] = [];
    const err = await client.uploadProject(file, { onRetry: (r) => retries.push(r) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(413);
    expect((err as ApiError).errorName).toBe('PAYLOAD_TOO_LARGE');
    expect(retries).toEqual([]);
    const puts = svc.logs
      .join('')
      .split('\n')
      .filter((l) => l.includes('"request completed"') && l.includes('"method":"PUT"') && l.includes('/storage/'));
    expect(puts).toHaveLength(1);
  });
});
