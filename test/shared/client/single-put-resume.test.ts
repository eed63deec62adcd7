// The single PUT resumed (extension resumable-uploads) on the service's own file storage: a link
// that goes down mid-upload (every connection reset, new ones refused) and comes back costs only
// the bytes that were in flight, not the file again; the stored file is the client's, byte for
// byte. The storage route itself: a resume must continue what the service holds, a plain PUT
// starts over, and the newest PUT of a URL wins over one the service still thinks is running.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import type { UploadRetry } from '../../../shared/client/single-put.js';
import { waitUntil } from '../../helpers/e2e.js';
import { startProxiedService, type ProxiedService } from '../../helpers/proxied-service.js';
import { filesOnly, startTestService, type TestService } from '../../helpers/service.js';

const SIZE = 24 * 1024 * 1024 + 5;
let dir: string;
let file: string;
let bytes: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rb-put-resume-'));
  file = path.join(dir, 'scene.blend');
  bytes = Buffer.concat([Buffer.from('BLENDER-v304'), randomBytes(SIZE - 12)]);
  await writeFile(file, bytes);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The bytes the service stored for an upload slug (objects/uploads/<workspace>/<slug>/<name>). */
async function storedFile(dataDir: string, slug: string): Promise<Buffer> {
  const root = path.join(dataDir, 'objects', 'uploads');
  for (const ws of await readdir(root)) {
    const names = await readdir(path.join(root, ws, slug)).catch(() => []);
    if (names[0]) return readFile(path.join(root, ws, slug, names[0]));
  }
  throw new Error(`no stored file for ${slug}`);
}

/** A raw PUT to a presigned URL: status and parsed JSON body; `hold` leaves the request open after `body`. */
function rawPut(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  hold = false,
): { answer: Promise<{ status: number; body: Record<string, unknown> }>; req: http.ClientRequest } {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', ...headers } });
  const answer = new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }),
      );
    });
  });
  answer.catch(() => undefined);
  req.write(body);
  if (!hold) req.end();
  return { answer, req };
}

describe('single PUT resumed over a link that drops (resumable-uploads)', () => {
  let env: ProxiedService | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it(
    'the link goes down halfway and comes back: the rest is sent, at most 1.2x the file in all, and the stored ' +
      "file is the client's",
    async () => {
      if (!filesOnly('resuming a PUT')) return;
      env = await startProxiedService('files');
      const e = env;
      const client = new RenderJobClient({
        baseUrl: e.baseUrl,
        apiKey: e.svc.apiKey,
        baseDelayMs: 50,
        maxDelayMs: 200,
        maxRetries: 2,
      });
      expect(await client.hasExtension('resumable-uploads')).toBe(true);
      e.proxy.reset();
      let outage: Promise<unknown> | undefined;
      const retries: UploadRetry[] = [];
      const target = await client.uploadProject(file, {
        onRetry: (r) => retries.push(r),
        onProgress: (sent) => {
          if (outage || sent < SIZE / 2) return;
          // Down (every open connection reset, new ones refused) until the client was refused 4 times.
          e.proxy.linkDown();
          outage = waitUntil('four refused connections', () => e.proxy.refused() >= 4, { intervalMs: 20 }).finally(() =>
            e.proxy.linkUp(),
          );
        },
      });
      await outage;
      expect(e.proxy.refused()).toBeGreaterThanOrEqual(4);
      expect(retries.length).toBeGreaterThanOrEqual(1);
      expect(retries.at(-1)?.fromByte).toBeGreaterThan(0);
      expect(e.proxy.requests().filter((r) => r.startsWith('PUT'))).toHaveLength(2);
      expect(e.proxy.up()).toBeLessThanOrEqual(1.2 * SIZE);
      expect(sha(await storedFile(e.svc.dataDir, target.slug))).toBe(sha(bytes));
      const state = await client.getUpload(target.slug);
      expect(state).toMatchObject({ completed: true, receivedBytes: SIZE, totalBytes: SIZE });
      expect((await client.createJob({ slug: target.slug })).status).toBe('created');
    },
    120_000,
  );
});

describe('the storage route keeps and continues a broken PUT', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it(
    'a resume past the kept bytes is refused with what is held; a plain PUT starts over; another workspace ' +
      'cannot see the upload',
    async () => {
      if (!filesOnly('resuming a PUT')) return;
      svc = await startTestService();
      const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
      const target = await client.createUpload({ fileName: 'scene.blend', fileType: 'blend' });
      // The first PUT sends some of the file, then its connection breaks: what arrived is kept.
      const first = rawPut(
        target.uploadUrl,
        bytes.subarray(0, 3 * 1024 * 1024),
        { 'content-length': String(SIZE) },
        true,
      );
      await new Promise<void>((resolve) => first.req.write(Buffer.alloc(0), () => resolve()));
      first.req.destroy();
      const half = await waitUntil(
        'bytes kept',
        async () => (await client.getUpload(target.slug)).receivedBytes || undefined,
        { intervalMs: 20 },
      );
      expect(await client.getUpload(target.slug)).toMatchObject({
        completed: false,
        receivedBytes: half,
        totalBytes: SIZE,
      });

      const past = rawPut(target.uploadUrl, bytes.subarray(half + 10), {
        'content-length': String(SIZE - half - 10),
        'content-range': `bytes ${half + 10}-${SIZE - 1}/${SIZE}`,
      });
      const refused = await past.answer;
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        name: 'UPLOAD_RESUME_MISMATCH',
        metadata: { receivedBytes: half, totalBytes: SIZE },
      });
      const badRange = await rawPut(target.uploadUrl, bytes.subarray(half), {
        'content-length': String(SIZE - half),
        'content-range': `bytes ${half}-${SIZE - 2}/${SIZE}`,
      }).answer;
      expect(badRange.status).toBe(400);

      // A plain PUT (the spec's) of other bytes starts the file over: the kept half is not used.
      const other = Buffer.from(bytes.subarray(0, 1024 * 1024)).fill(7, 100);
      const plain = await rawPut(target.uploadUrl, other, { 'content-length': String(other.length) }).answer;
      expect(plain.status).toBe(200);
      expect(plain.body).toMatchObject({ size: other.length, sha256: sha(other) });
      expect(await client.getUpload(target.slug)).toMatchObject({ completed: true, receivedBytes: other.length });

      const stranger = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: await svc.createApiKey('elsewhere') });
      await expect(stranger.getUpload(target.slug)).rejects.toMatchObject({ errorName: 'UPLOAD_NOT_FOUND' });
    },
    60_000,
  );

  it('a resume continues the kept bytes exactly, and wins over a PUT the service still thinks is running', async () => {
    if (!filesOnly('resuming a PUT')) return;
    svc = await startTestService();
    const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const target = await client.createUpload({ fileName: 'scene.blend', fileType: 'blend' });
    const half = 5 * 1024 * 1024;
    // Half is sent, and the request stays open: the service cannot tell it from a slow client.
    const first = rawPut(target.uploadUrl, bytes.subarray(0, half), { 'content-length': String(SIZE) }, true);
    await waitUntil('bytes kept', async () => (await client.getUpload(target.slug)).receivedBytes >= 4 * 1024 * 1024, {
      intervalMs: 20,
    });
    const from = (await client.getUpload(target.slug)).receivedBytes;
    const resume = await rawPut(target.uploadUrl, bytes.subarray(from), {
      'content-length': String(SIZE - from),
      'content-range': `bytes ${from}-${SIZE - 1}/${SIZE}`,
    }).answer;
    expect(resume.status).toBe(200);
    expect(resume.body).toMatchObject({ size: SIZE, sha256: sha(bytes) });
    // The older PUT was ended by the newer one.
    await expect(first.answer).rejects.toThrow();
    expect(sha(await storedFile(svc.dataDir, target.slug))).toBe(sha(bytes));
    expect((await client.createJob({ slug: target.slug })).status).toBe('created');
  }, 60_000);
});
