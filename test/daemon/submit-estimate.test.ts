// The daemon's estimate (POST /submissions with mode `estimate`, GET/DELETE /jobs/:id/estimate)
// against a real daemon over HTTP, a reference service with its worker and real Blender: the
// submission packs, uploads and validates as for a render, then follows the service's estimate to
// `done` with the job still validated; a render submitted by jobId with the same settings uploads
// nothing and keeps the sampled frames (their stats rows are the estimate's, not rendered again);
// DELETE stops an estimate and its submission ends ESTIMATE_CANCELED; an estimate that cannot be
// made ends ESTIMATE_FAILED with the service's one-sentence reason.
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameStatsPage } from '../../shared/api/frame-stats.js';
import { Estimate } from '../../shared/api/estimate.js';
import { Submission, type SubmitRequest } from '../../shared/daemon/submission-schemas.js';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { blenderProcesses, startE2E, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildFixtureZip, shadowedCameraZip } from '../helpers/fixtures.js';
import { api } from '../helpers/http.js';
import { daemonCall, startTestBridge } from './harness.js';

let e2e: E2E;
let work: string;
let daemon: RunningBridgeDaemon;
let zip: string;
let call: ReturnType<typeof daemonCall>;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'rb-daemon-estimate-'));
  e2e = await startE2E({ estimateRates: 'CPU=3.6' });
  daemon = await startTestBridge({
    serviceUrl: e2e.svc.baseUrl,
    apiKey: e2e.svc.apiKey,
    work,
    stateDir: path.join(work, 'state'),
  });
  call = daemonCall(daemon);
  zip = path.join(work, 'basic.zip');
  await buildFixtureZip(['basic'], zip);
}, 120_000);
afterAll(async () => {
  await daemon?.close();
  await e2e?.svc.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const tiny = { resolution: [64, 48] as [number, number], sampleCount: 4 };

/** Starts a submission; resolves with every state seen while polling it, ending with the last. */
async function follow(body: SubmitRequest | Record<string, unknown>, timeoutMs = 300_000): Promise<Submission[]> {
  const started = await call('POST', '/submissions', body);
  expect(started.status, started.text).toBe(202);
  const seen = [Submission.parse(started.json)];
  await waitUntil(
    'the submission to end',
    async () => {
      const s = Submission.parse((await call('GET', `/submissions/${seen[0]!.id}`)).json);
      seen.push(s);
      return s.step === 'done' || s.step === 'failed';
    },
    { timeoutMs, intervalMs: 100 },
  );
  return seen;
}
const stepsOf = (seen: Submission[]) => seen.map((s) => s.step).filter((s, i, all) => i === 0 || all[i - 1] !== s);

describe('daemon estimate', () => {
  it(
    'estimates as for a render, stopping at validated; the render by jobId uploads nothing and keeps the ' +
      'sampled frames',
    async () => {
      const settings = { frames: ['1-9'], renderConfig: tiny };
      const seen = await follow({ pack: { path: zip }, settings, mode: 'estimate' });
      const final = seen.at(-1)!;
      expect(final.error).toBeNull();
      // Polls may miss a short step (creating): the ones that last are seen, in order.
      expect(stepsOf(seen)[0]).toBe('packing');
      expect(stepsOf(seen).slice(-3)).toEqual(['validating', 'estimating', 'done']);
      // The project was sent (a tiny one may upload between two polls): its upload is recorded.
      expect(final.upload).not.toBeNull();
      const jobId = final.jobId!;
      const est = final.estimate!;
      expect(est).toMatchObject({ jobId, state: 'ready', reason: null, framesTotal: 9 });
      // The service picks the frames (at least first, middle and last).
      const picked = est.sampleFrames;
      expect(picked).toEqual(expect.arrayContaining([1, 9]));
      expect(picked.length).toBeGreaterThanOrEqual(3);
      const f = est.figures!;
      expect(f.framesToRender).toBe(9 - picked.length);
      // The wait before its Blender (the project fetched and unpacked) is measured: each slot of the
      // render pays it too, so the wall time counts it.
      const stored = (await e2e.svc.service.ports.jobs.getById(jobId))!.internal.estimate!;
      console.log(`the estimate's wait before Blender: ${stored.prepareSeconds?.join(', ')} s`);
      expect(stored.prepareSeconds).toHaveLength(1);
      expect(stored.prepareSeconds![0]).toBeGreaterThanOrEqual(0);
      expect(f.wallSeconds.value).toBeGreaterThan(0);
      for (const b of [f.wallSeconds, f.renderSeconds, f.cost!, f.peakMemoryBytes!]) {
        expect(b.frames).toBeGreaterThanOrEqual(3);
        expect(b.low).toBeLessThanOrEqual(b.value);
        expect(b.value).toBeLessThanOrEqual(b.high);
      }
      expect(f.memory.summary).toMatch(/^Peak memory about /);
      expect((await e2e.client.getJob(jobId)).status).toBe('validated');
      // The daemon's own GET answers the service's estimate.
      const read = await call('GET', `/jobs/${jobId}/estimate`);
      expect(read.status).toBe(200);
      expect(Estimate.parse(read.json)).toMatchObject({ state: 'ready', sampleFrames: picked });

      // Estimating the same job again (by its id) answers the same estimate, nothing uploaded.
      const again = (await follow({ jobId, settings, mode: 'estimate' })).at(-1)!;
      expect(again).toMatchObject({ step: 'done', upload: null, jobId });
      expect(again.estimate).toMatchObject({ startedAt: est.startedAt, finishedAt: est.finishedAt });

      const service = api(e2e.svc.baseUrl, e2e.svc.apiKey);
      const rowsOf = async () => FrameStatsPage.parse((await service('GET', `/jobs/${jobId}/frames`)).body).data.frames;
      const sampled = await rowsOf();
      expect(sampled.map((r) => r.frame)).toEqual(picked);

      const outDir = path.join(work, 'rendered');
      await mkdir(outDir);
      const rendered = await follow({ jobId, settings, outDir });
      expect(rendered.at(-1)!.error).toBeNull();
      expect(stepsOf(rendered)).not.toContain('uploading');
      expect(stepsOf(rendered).at(-1)).toBe('done');
      expect(rendered.every((s) => s.upload === null && s.pack === null)).toBe(true);
      // Every frame is downloaded; the sampled ones were rendered once, for the estimate.
      const files = (await readdir(outDir, { recursive: true })).filter((f) => /\.png$/.test(f));
      expect(files).toHaveLength(9);
      const rows = await rowsOf();
      expect(rows.map((r) => r.frame)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const s of sampled) expect(rows.find((r) => r.frame === s.frame)).toEqual(s);
    },
    600_000,
  );

  it('DELETE /jobs/:id/estimate stops an estimate: the submission ends ESTIMATE_CANCELED, job validated', async () => {
    // Slow frames, so the cancel comes while it samples.
    const settings = { frames: ['1-40'], renderConfig: { resolution: [320, 240], sampleCount: 4000 } };
    const started = Submission.parse(
      (await call('POST', '/submissions', { pack: { path: zip }, settings, mode: 'estimate' })).json,
    );
    const jobId = await waitUntil(
      'the estimate to sample',
      async () => {
        const s = Submission.parse((await call('GET', `/submissions/${started.id}`)).json);
        return s.step === 'estimating' && s.jobId !== null && blenderProcesses(s.jobId).length > 0 ? s.jobId : false;
      },
      { timeoutMs: 240_000 },
    );
    const canceled = await call('DELETE', `/jobs/${jobId}/estimate`);
    expect(canceled.status, canceled.text).toBe(200);
    expect(Estimate.parse(canceled.json).state).toBe('canceled');
    const final = await waitUntil('the submission to end', async () => {
      const s = Submission.parse((await call('GET', `/submissions/${started.id}`)).json);
      return s.step === 'failed' && s;
    });
    expect(final.error).toMatchObject({ name: 'ESTIMATE_CANCELED' });
    expect(final.error!.message).toMatch(/the job stays validated/);
    await waitUntil('its Blender to end', () => blenderProcesses(jobId).length === 0, { timeoutMs: 60_000 });
    expect((await e2e.client.getJob(jobId)).status).toBe('validated');
  }, 600_000);

  it('says in one sentence why an estimate cannot be made (ESTIMATE_FAILED)', async () => {
    const bad = await shadowedCameraZip(work);
    const seen = await follow({
      pack: { path: bad },
      settings: { frames: ['1-4'], renderConfig: tiny, validationConfig: { pathToFileForRender: 'shot/scene.blend' } },
      mode: 'estimate',
    });
    const final = seen.at(-1)!;
    expect(final.step).toBe('failed');
    expect(final.error!.name).toBe('ESTIMATE_FAILED');
    expect(final.error!.message).toMatch(/^The sample frames could not be rendered: .*camera 'Shot' not found.*\./);
    expect(final.estimate).toMatchObject({ state: 'failed' });
    expect((await e2e.client.getJob(final.jobId!)).status).toBe('validated');
  }, 600_000);
});
