import { describe, expect, it } from 'vitest';
import { Job, JobEnvelope, JobList } from '../../../shared/api/job.js';
import { createJob, newUpload, putBytes } from '../../helpers/flow.js';
import { errorBody } from '../../helpers/http.js';
import { useTwoWorkspaces } from '../../helpers/two-workspaces.js';

const ws = useTwoWorkspaces();
const { call, other } = ws;

describe('POST /jobs', () => {
  it('creates a job in created with every required field and the stored preflight', async () => {
    const t = await newUpload(call, 'project.zip');
    await putBytes(t.uploadUrl, Buffer.from('PK\x03\x04'), 'application/zip');
    const uploadPreflight = {
      schemaVersion: 1,
      source: 'client_zip_inspection',
      blendFiles: ['shots/a.blend'],
      packerManifestPreview: { manifestPath: 'renderbridge-manifest.json', bundledAddons: [] },
    };
    const r = await call('POST', '/jobs', { slug: t.slug, uploadPreflight });
    expect(r.status).toBe(201);
    const job = Job.parse(r.body);
    expect(job.status).toBe('created');
    expect(job.workspaceId).toBe(ws.svc.workspaceId);
    expect(job.uploadPreflight).toEqual(uploadPreflight);
    expect(job.sceneFile?.name).toBe('project.zip');
    expect(job.output).toEqual({ isDeletedForClient: false, scheduledForDeletionAt: null });
    const got = JobEnvelope.parse((await call('GET', `/jobs/${job.id}`)).body);
    expect(got.data).toEqual(job);
  });

  it('creates one job per slug: the second POST is 409 UPLOAD_ALREADY_USED', async () => {
    const t = await newUpload(call);
    await putBytes(t.uploadUrl, Buffer.from('x'));
    const results = await Promise.all([1, 2, 3].map(() => call('POST', '/jobs', { slug: t.slug })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(errorBody(results.find((r) => r.status === 409)!).name).toBe('UPLOAD_ALREADY_USED');
  });

  it('refuses a slug whose PUT never happened with 409 UPLOAD_INCOMPLETE', async () => {
    const t = await newUpload(call);
    const r = await call('POST', '/jobs', { slug: t.slug });
    expect(r.status).toBe(409);
    expect(errorBody(r).name).toBe('UPLOAD_INCOMPLETE');
  });

  it("does not know another workspace's slug (404)", async () => {
    const t = await newUpload(call);
    await putBytes(t.uploadUrl, Buffer.from('x'));
    const r = await other('POST', '/jobs', { slug: t.slug });
    expect(r.status).toBe(404);
    expect(errorBody(r).name).toBe('UPLOAD_NOT_FOUND');
  });

  it.each([
    ['no body', undefined],
    ['empty slug', { slug: '' }],
    ['numeric slug', { slug: 5 }],
    ['unknown field', { slug: 'up_x', fileName: 'a.blend' }],
    ['bad preflight', { slug: 'up_x', uploadPreflight: { schemaVersion: 1, source: 'elsewhere', blendFiles: [] } }],
  ])('refuses %s with 400', async (_n, body) => {
    const r = await call(
      'POST',
      '/jobs',
      body,
      body === undefined ? { headers: { 'content-type': 'application/json' }, raw: '' } : {},
    );
    expect(r.status).toBe(400);
    expect(['VALIDATION_ERROR', 'INVALID_JSON']).toContain(errorBody(r).name);
  });

  it('answers an unknown slug with 404', async () => {
    const r = await call('POST', '/jobs', { slug: 'up_doesnotexist' });
    expect(r.status).toBe(404);
    expect(errorBody(r).name).toBe('UPLOAD_NOT_FOUND');
  });
});

describe('GET /jobs/{id}', () => {
  it("hides other workspaces' jobs behind the same 404 as unknown ids", async () => {
    const job = await createJob(call);
    const theirs = await other('GET', `/jobs/${job.id}`);
    const unknown = await other('GET', '/jobs/00000000-0000-4000-8000-000000000000');
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(errorBody(theirs).name).toBe('JOB_NOT_FOUND');
    expect(errorBody(theirs).message).toBe(errorBody(unknown).message);
    for (const action of ['validate', 'render', 'cancel', 'progress', 'downloads']) {
      const method = ['progress', 'downloads'].includes(action) ? 'GET' : 'POST';
      const body =
        action === 'render'
          ? { requestedRenderConfig: { colorManagementPreset: 'default' } }
          : method === 'POST'
            ? {}
            : undefined;
      const r = await other(method, `/jobs/${job.id}/${action}`, body);
      expect(r.status, action).toBe(404);
    }
    expect((await call('GET', `/jobs/${job.id}`)).status).toBe(200);
  });

  it.each(['not-a-uuid', '123', '%27%20OR%201%3D1'])('answers a malformed id (%s) with 400', async (id) => {
    const r = await call('GET', `/jobs/${id}`);
    expect(r.status).toBe(400);
    expect(errorBody(r).details[0]!.path).toEqual(['params', 'id']);
  });
});

describe('GET /jobs', () => {
  // A service of its own: the counts below are of these jobs alone.
  const fresh = useTwoWorkspaces('elsewhere');

  it("lists only the workspace's jobs, newest first, with pagination and a status filter", async () => {
    const { call: mine, other: theirs } = fresh;
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createJob(mine)).id);
    await createJob(theirs);
    await mine('POST', `/jobs/${created[1]}/validate`, {});

    const all = JobList.parse((await mine('GET', '/jobs')).body);
    expect(all.jobs.map((j) => j.id)).toEqual([...created].reverse());
    expect(all.pagination).toEqual({ page: 1, pageSize: 20, total: 5, totalPages: 1 });

    const p2 = JobList.parse((await mine('GET', '/jobs?page=2&pageSize=2')).body);
    expect(p2.jobs.map((j) => j.id)).toEqual([created[2], created[1]]);
    expect(p2.pagination).toEqual({ page: 2, pageSize: 2, total: 5, totalPages: 3 });

    const beyond = JobList.parse((await mine('GET', '/jobs?page=9&pageSize=2')).body);
    expect(beyond.jobs).toEqual([]);

    const validating = JobList.parse((await mine('GET', '/jobs?status=validating')).body);
    expect(validating.jobs.map((j) => j.id)).toEqual([created[1]]);
    expect(validating.pagination.total).toBe(1);
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['pageSize=0', 'pageSize'],
    ['pageSize=101', 'pageSize'],
    ['pageSize=abc', 'pageSize'],
    ['status=done', 'status'],
    ['status=COMPLETED', 'status'],
    ['sort=asc', ''],
  ])('refuses %s with 400', async (qs, field) => {
    const r = await call('GET', `/jobs?${qs}`);
    expect(r.status).toBe(400);
    const e = errorBody(r);
    expect(e.type).toBe('zod');
    expect(e.details[0]!.path[0]).toBe('querystring');
    if (field) expect(e.details[0]!.path).toContain(field);
  });

  it('accepts the bounds themselves: pageSize=100 and pageSize=1', async () => {
    expect((await call('GET', '/jobs?pageSize=100')).status).toBe(200);
    expect(JobList.parse((await call('GET', '/jobs?pageSize=1')).body).jobs.length).toBe(1);
  });
});
