// The estimate extension on real renders (real service, its in-process worker, real Blender):
// POST /jobs/{id}/estimate renders first, middle and last frame of a validated job in one Blender
// on a render slot (one scene load), answers figures with bands resting on those frames, a repeat
// answers the same estimate, the later render of the same request does not render the sampled
// frames again, a cancel stops an estimate, and the spec's error
// bodies answer another workspace and a job not validated.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EstimateEnvelope, type Estimate } from '../../shared/api/estimate.js';
import { FrameStatsPage } from '../../shared/api/frame-stats.js';
import { ErrorBody } from '../../shared/api/error-body.js';
import { JobTaskList } from '../../shared/api/dashboard.js';
import {
  blenderProcesses,
  startE2E,
  submit,
  tinyRender,
  validationOutcome,
  waitUntil,
  type E2E,
} from '../helpers/e2e.js';
import { buildFixture, shadowedCameraZip } from '../helpers/fixtures.js';
import { api } from '../helpers/http.js';

let e2e: E2E;
let call: ReturnType<typeof api>;
let blend: string;

beforeAll(async () => {
  e2e = await startE2E({ estimateRates: 'CPU=3.6' });
  call = api(e2e.svc.baseUrl, e2e.svc.apiKey);
  blend = await buildFixture('basic');
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
});

async function validatedJob(): Promise<string> {
  const id = await submit(e2e.client, blend);
  expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
  return id;
}

const readEstimate = async (id: string): Promise<Estimate> =>
  EstimateEnvelope.parse((await call('GET', `/jobs/${id}/estimate`)).body).data;
const ended = (id: string) =>
  waitUntil(
    'the estimate to end',
    async () => {
      const e = await readEstimate(id);
      return e.state !== 'sampling' && e;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );

/**
 * Estimates a 9-frame job, checks its figures and its replay, then renders it: the sampled
 * frames are not rendered again.
 */
async function estimateThenRender(): Promise<void> {
  const id = await validatedJob();
  const body = tinyRender('1-9');
  const started = await call('POST', `/jobs/${id}/estimate`, body);
  expect(started.status).toBe(202);
  expect(EstimateEnvelope.parse(started.body).data).toMatchObject({ state: 'sampling', sampleFrames: [] });
  // A spec client sees the job validated while the estimate samples.
  expect((await e2e.client.getJob(id)).status).toBe('validated');
  const est = await ended(id);
  expect(est).toMatchObject({ state: 'ready', reason: null, sampleFrames: [1, 5, 9], framesTotal: 9 });
  const f = est.figures!;
  expect(f.device).toBe('CPU');
  expect(f.framesToRender).toBe(6);
  for (const b of [f.wallSeconds, f.renderSeconds, f.normalizedSeconds, f.cost!, f.outputBytes!, f.peakMemoryBytes!]) {
    expect(b.frames).toBeGreaterThanOrEqual(3);
    expect(b.low).toBeLessThanOrEqual(b.value);
    expect(b.value).toBeLessThanOrEqual(b.high);
  }
  expect(f.renderSeconds.value).toBeGreaterThan(0);
  expect(f.peakMemoryBytes!.value).toBeGreaterThan(0);
  expect(f.outputBytes!.value).toBeGreaterThan(0);
  // One warm Blender rendered every sample: one scene load.
  expect(f.loadSeconds!.frames).toBe(1);
  expect(f.memory.summary).toMatch(/^Peak memory about/);
  expect(est.ownCost.renderSeconds).toBeGreaterThan(0);
  expect(est.ownCost.cost).not.toBeNull();

  // A repeat is the same estimate, said to be a replay.
  const again = await call('POST', `/jobs/${id}/estimate`, body);
  expect(again.status).toBe(200);
  expect(again.headers.get('x-idempotent-replay')).toBe('true');
  expect(EstimateEnvelope.parse(again.body).data).toMatchObject({
    state: 'ready',
    sampleFrames: [1, 5, 9],
    startedAt: est.startedAt,
    finishedAt: est.finishedAt,
  });

  const sampledRows = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body).data.frames;
  expect(sampledRows.map((r) => r.frame)).toEqual([1, 5, 9]);
  await e2e.client.renderJob(id, body);
  expect(
    (await e2e.client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 300_000 })).status,
  ).toBe('completed');
  const rows = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body).data.frames;
  // Every frame has one row; the sampled frames' are the estimate's own (not rendered again).
  expect(rows.map((r) => r.frame)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  for (const s of sampledRows) expect(rows.find((r) => r.frame === s.frame)).toEqual(s);
  // The estimate still answers from its own samples, not from the render's frames.
  expect((await readEstimate(id)).figures).toMatchObject({
    renderSeconds: f.renderSeconds,
    peakMemoryBytes: f.peakMemoryBytes,
    framesToRender: 6,
  });
  const downloads = await e2e.client.getDownloads(id);
  expect(JSON.stringify(downloads)).toContain('0005');
}

describe('estimate', () => {
  it(
    'samples first, middle and last frame and answers figures with bands resting on them; the render keeps them',
    estimateThenRender,
    600_000,
  );

  it('stops when canceled, and the job stays validated', async () => {
    const id = await validatedJob();
    // Slow frames, so the cancel comes while it samples.
    await call('POST', `/jobs/${id}/estimate`, tinyRender('1-40', { sampleCount: 4000, resolution: [320, 240] }));
    await waitUntil('its Blender to render a sample', () => blenderProcesses(id).length > 0, { timeoutMs: 120_000 });
    const canceled = await call('DELETE', `/jobs/${id}/estimate`);
    expect(canceled.status).toBe(200);
    expect(EstimateEnvelope.parse(canceled.body).data.state).toBe('canceled');
    const tasks = await waitUntil(
      'the estimate task to stop',
      async () => {
        const list = JobTaskList.parse((await call('GET', `/jobs/${id}/tasks`)).body).data;
        return list.length > 0 && list.every((t) => t.state !== 'running' && t.state !== 'queued') && list;
      },
      { timeoutMs: 60_000 },
    );
    expect(tasks.map((t) => t.state)).toContain('canceled');
    // No Blender of the job is left running.
    await waitUntil('its Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 60_000 });
    expect((await e2e.client.getJob(id)).status).toBe('validated');
    expect((await readEstimate(id)).state).toBe('canceled');
  }, 300_000);

  it('says in one sentence why an estimate cannot be made, and the job stays validated', async () => {
    const scratch = await mkdtemp(path.join(tmpdir(), 'rb-estimate-'));
    // Validation sees the camera; Blender, at render time, cannot resolve its name.
    const id = await submit(e2e.client, await shadowedCameraZip(scratch), { pathToFileForRender: 'shot/scene.blend' });
    expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
    await call('POST', `/jobs/${id}/estimate`, tinyRender('1-4'));
    const est = await ended(id);
    expect(est.state).toBe('failed');
    expect(est.reason).toMatch(/^The sample frames could not be rendered: .*camera 'Shot' not found.*\.$/);
    expect(est.reason!.split('. ').length).toBe(1);
    expect(est.figures).toBeNull();
    expect((await e2e.client.getJob(id)).status).toBe('validated');
  }, 300_000);

  it("answers another workspace 404 and a job that is not validated 409, in the spec's error body", async () => {
    const id = await validatedJob();
    const other = api(e2e.svc.baseUrl, await e2e.svc.createApiKey('elsewhere'));
    for (const [method, body] of [
      ['POST', tinyRender('1')],
      ['GET', undefined],
      ['DELETE', undefined],
    ] as const) {
      const r = await other(method, `/jobs/${id}/estimate`, body);
      expect(r.status).toBe(404);
      expect(ErrorBody.parse(r.body).name).toBe('JOB_NOT_FOUND');
    }
    expect(ErrorBody.parse((await call('GET', `/jobs/${id}/estimate`)).body).name).toBe('ESTIMATE_NOT_FOUND');
    await e2e.client.cancelJob(id);
    const r = await call('POST', `/jobs/${id}/estimate`, tinyRender('1'));
    expect(r.status).toBe(409);
    expect(ErrorBody.parse(r.body)).toMatchObject({ name: 'ESTIMATE_NOT_ALLOWED', metadata: { status: 'canceled' } });
  }, 300_000);
});

describe('estimate in chunked mode', () => {
  let warm: E2E;
  beforeAll(async () => {
    // The render's chunks, not warm slots, find the estimate's frames copied in.
    warm = e2e;
    e2e = await startE2E({ estimateRates: 'CPU=3.6', renderMode: 'chunked' });
    call = api(e2e.svc.baseUrl, e2e.svc.apiKey);
  }, 120_000);
  afterAll(async () => {
    await e2e.svc.close();
    e2e = warm;
    call = api(e2e.svc.baseUrl, e2e.svc.apiKey);
  });

  it('keeps the sampled frames for a chunked render too', estimateThenRender, 600_000);
});
