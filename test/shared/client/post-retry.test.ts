// A POST whose connection breaks (a farm-side reset, a pooled connection the far side forgot)
// is sent again only when a repeat does no harm: the blob query and commit, and render (a
// replay). POST /jobs is not blindly resent: the client asks again and takes the job the
// service says the slug already made, so a slug never yields two jobs. Validate and cancel, whose
// repeat the spec refuses, read the job back after a lost connection and are sent again only when
// the service never got them. A link that drops and comes back is waited for (issue 30). Real
// service behind a real proxy that resets connections mid-request, drops answers, or goes down.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RenderJobClient } from '../../../shared/client/client.js';
import { NetworkError } from '../../../shared/client/errors.js';
import { waitUntil } from '../../helpers/e2e.js';
import { startProxiedService, type ProxiedService } from '../../helpers/proxied-service.js';

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

it(
  'validates once when validate breaks: resent when the service never read it, read back when its answer was ' + 'lost',
  async () => {
    // Cut before the service read the request: the job is still `created`, so validate goes again.
    const c = await client.commitUpload({ fileName: 'c.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
    const early = await direct.createJob({ slug: c.slug });
    ps.proxy.cut({ request: /^POST \S*\/validate /, afterBytes: 10 });
    const sent = await client.validateJob(early.id, {});
    expect(sent.id).toBe(early.id);
    expect(sent.status).not.toBe('created');

    // The service validated, then the answer was lost: a second validate would be a 400, so the
    // client reads the job instead and answers it; no second validate is sent.
    const d = await client.commitUpload({ fileName: 'd.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
    const late = await direct.createJob({ slug: d.slug });
    ps.proxy.reset();
    ps.proxy.cut({ request: /^POST \S*\/validate /, afterBytes: 0, answer: true });
    const read = await client.validateJob(late.id, {});
    expect(read.id).toBe(late.id);
    expect(read.status).not.toBe('created');
    expect(ps.proxy.requests().filter((r) => r.endsWith('/validate'))).toHaveLength(1);
    expect(ps.proxy.requests()).toContain(`GET ${new URL(ps.baseUrl).pathname}/jobs/${late.id}`);
  },
);

it('cancels once when the answer to cancel is lost: the canceled job is the answer, not a 409', async () => {
  const e = await client.commitUpload({ fileName: 'e.zip', entries: [{ path: 'scene.blend', ...EMPTY }] });
  const job = await direct.createJob({ slug: e.slug });
  ps.proxy.reset();
  ps.proxy.cut({ request: /^POST \S*\/cancel /, afterBytes: 0, answer: true });
  const canceled = await client.cancelJob(job.id);
  expect([canceled.id, canceled.status]).toEqual([job.id, 'canceled']);
  expect(ps.proxy.requests().filter((r) => r.endsWith('/cancel'))).toHaveLength(1);
});

it('waits for a link that drops and comes back, says so; past its patience, says the connection dropped', async () => {
  const downs: number[] = [];
  const patient = new RenderJobClient({
    baseUrl: ps.baseUrl,
    apiKey: ps.svc.apiKey,
    baseDelayMs: 1,
    maxDelayMs: 5,
    maxRetries: 1,
    onReconnect: (i) => downs.push(i.downMs),
  });
  await patient.listJobs({});
  ps.proxy.linkDown();
  const refusedBefore = ps.proxy.refused();
  const listing = patient.listJobs({});
  // Down for as long as it takes the client to be refused several times: well past maxRetries.
  await waitUntil('three refused connections', () => ps.proxy.refused() >= refusedBefore + 3);
  ps.proxy.linkUp();
  expect((await listing).pagination.total).toBeGreaterThan(0);
  expect(downs).toHaveLength(1);
  expect(downs[0]).toBeGreaterThan(0);

  const brief = new RenderJobClient({
    baseUrl: ps.baseUrl,
    apiKey: ps.svc.apiKey,
    baseDelayMs: 1,
    maxDelayMs: 5,
    maxRetries: 1,
    reconnectPatienceMs: 300,
  });
  await brief.listJobs({});
  ps.proxy.linkDown();
  try {
    const err = await brief.listJobs({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).dropped?.waitedMs).toBeGreaterThanOrEqual(300);
    expect((err as NetworkError).message).toMatch(
      /the service answered \d+ s before, so the connection dropped and did not come back within \d+ s/,
    );
  } finally {
    ps.proxy.linkUp();
  }
});

it('gives up on a service that never answered after maxRetries, without calling it a dropped connection', async () => {
  const nowhere = new RenderJobClient({
    baseUrl: 'http://127.0.0.1:9/api/external/v1',
    apiKey: ps.svc.apiKey,
    baseDelayMs: 1,
    maxDelayMs: 5,
    maxRetries: 2,
  });
  const err = await nowhere.listJobs({}).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(NetworkError);
  expect((err as NetworkError).dropped).toBeUndefined();
  expect((err as NetworkError).message).not.toMatch(/dropped/);
});
