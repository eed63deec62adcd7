// A POST whose connection breaks (a farm-side reset, a pooled connection the far side forgot)
// is sent again only when a repeat does no harm: the blob query and commit, and render (a
// replay). POST /jobs is not blindly resent: the client asks again and takes the job the
// service says the slug already made, so a slug never yields two jobs. Real service behind a
// real proxy that resets the connection mid-request.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { NetworkError } from '../../shared/client/errors.js';
import { startProxiedService, type ProxiedService } from '../helpers/proxied-service.js';

const EMPTY = { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', size: 0 };
let ps: ProxiedService;
let client: RenderJobClient;
let direct: RenderJobClient;

beforeAll(async () => {
  ps = await startProxiedService('files');
  const fast = { baseDelayMs: 1, maxDelayMs: 5 };
  client = new RenderJobClient({ baseUrl: ps.baseUrl, apiKey: ps.svc.apiKey, ...fast });
  direct = new RenderJobClient({ baseUrl: ps.svc.baseUrl, apiKey: ps.svc.apiKey, ...fast });
}, 60_000);

afterAll(async () => {
  await ps?.close();
});

it('sends the blob query and the commit again after a reset, and the project commits', async () => {
  ps.proxy.cut({ request: /^POST \S*\/uploads\/blobs\/query /, afterBytes: 10 });
  ps.proxy.cut({ request: /^POST \S*\/uploads\/commit /, afterBytes: 10 });
  const q = await client.queryBlobs({ blobs: [EMPTY] });
  expect(q.missing).toEqual([]);
  const committed = await client.commitUpload({ fileName: 'shot.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
  expect(committed.slug).toMatch(/^up_/);
  expect(ps.proxy.cuts()).toBe(2);
});

it('creates one job per slug when POST /jobs breaks: asked again, the job the slug made is the answer', async () => {
  const before = (await direct.listJobs({})).pagination.total;
  // The connection breaks before the service read the request: the repeat creates the job.
  const a = await client.commitUpload({ fileName: 'a.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
  ps.proxy.cut({ request: /^POST \S*\/jobs /, afterBytes: 10 });
  const jobA = await client.createJob({ slug: a.slug });
  expect(jobA.status).toBe('created');

  // The first request made the job, then the answer was lost: the repeat finds that job.
  const b = await client.commitUpload({ fileName: 'b.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
  const madeFirst = await direct.createJob({ slug: b.slug });
  ps.proxy.cut({ request: /^POST \S*\/jobs /, afterBytes: 10 });
  const jobB = await client.createJob({ slug: b.slug });
  expect(jobB.id).toBe(madeFirst.id);

  expect((await direct.listJobs({})).pagination.total).toBe(before + 2);
});

it('does not resend a POST whose repeat could do harm: validate surfaces the network error', async () => {
  const c = await client.commitUpload({ fileName: 'c.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
  const job = await direct.createJob({ slug: c.slug });
  ps.proxy.cut({ request: /^POST \S*\/validate /, afterBytes: 10 });
  await expect(client.validateJob(job.id, {})).rejects.toBeInstanceOf(NetworkError);
});
