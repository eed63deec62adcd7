// The job page's estimate in real Chromium against the real service, its worker and real Blender:
// on a validated job "Estimate" renders sample frames on the farm, the page shows the figures
// that GET /jobs/{id}/estimate answers once ready, and "Render" renders the job keeping the
// sampled frames. Cancel estimate, clicked while the farm's Blender renders the samples, stops it.
// A bad request shows the service's message; a service without the extension shows no Estimate at
// all. Screenshots are kept under the temp folder.
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { EstimateEnvelope, type Estimate, type EstimateBand } from '../../../shared/api/estimate.js';
import { JobTaskList } from '../../../shared/api/dashboard.js';
import { FrameStatsPage } from '../../../shared/api/frame-stats.js';
import { blenderProcesses, submit, validationOutcome, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { api } from '../../helpers/http.js';
import { appOn } from './app-on.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

const farm = chromiumFarm('the dashboard estimate test', { estimateRates: 'CPU=3.6' });
const suite = farm.suite;
let blend: string;
beforeAll(async () => {
  if (farm.ready) blend = await buildFixture('basic');
}, 120_000);
const validatedId = async (): Promise<string> => {
  const id = await submit(farm.e2e.client, blend);
  expect((await validationOutcome(farm.e2e.client, id)).status).toBe('validated');
  return id;
};

type Shown = Record<string, { text: string; band: EstimateBand | null }>;

/** The figures the page shows: each row's words, and its band from the row's data attributes. */
const shownFigures = (page: Page): Promise<Shown> =>
  page.$$eval('#estimate-figures [data-figure]', (rows) =>
    Object.fromEntries(
      rows.map((r) => {
        const dd = r.querySelector('dd') as HTMLElement;
        const d = dd.dataset;
        const band =
          d.value === undefined
            ? null
            : { value: Number(d.value), low: Number(d.low), high: Number(d.high), frames: Number(d.frames) };
        return [(r as HTMLElement).dataset.figure!, { text: dd.textContent ?? '', band }];
      }),
    ),
  );

const money = (b: EstimateBand) => `${b.value.toFixed(2)} (${b.low.toFixed(2)} – ${b.high.toFixed(2)})`;

suite('estimate on the job page', () => {
  it('estimates a validated job, shows what GET answers, and renders it keeping the sampled frames', async () => {
    const { svc, client } = farm.e2e;
    const call = api(svc.baseUrl, svc.apiKey);
    const id = await validatedId();
    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey, {
      width: 1280,
      height: 1200,
    });
    await page.goto(`${svc.origin}/#/jobs/${id}`);
    await page.waitForSelector('#estimate-form:not([hidden])', { timeout: 30_000 });
    expect(await page.isHidden('#estimate-render')).toBe(true);

    // A request the service refuses shows its message, and nothing starts.
    await page.fill('#estimate-frames', 'soon');
    await page.click('#estimate-start');
    await page.waitForSelector('#estimate-error:not([hidden])');
    expect(await page.textContent('#estimate-error')).toMatch(/A-B/);
    expect((await call('GET', `/jobs/${id}/estimate`)).status).toBe(404);

    await page.fill('#estimate-frames', '1-5');
    await page.click('#estimate-start');
    await page.waitForSelector('#estimate-error', { state: 'hidden' });
    await page.waitForSelector('#estimate-state[data-state="ready"]', { timeout: 240_000 });
    await screenshot(page, 'estimate', 'ready');

    const read = async (): Promise<Estimate> =>
      EstimateEnvelope.parse((await call('GET', `/jobs/${id}/estimate`)).body).data;
    // The wall time is the farm's now, re-read by the page while the job waits: equal once the slot is free again.
    const [est, shown] = await waitUntil(
      'the page to show the wall time GET answers',
      async () => {
        const [e, s] = [await read(), await shownFigures(page)];
        return JSON.stringify(s.wall?.band) === JSON.stringify(e.figures?.wallSeconds) && ([e, s] as const);
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(est).toMatchObject({
      state: 'ready',
      sampleFrames: [1, 3, 5],
      framesTotal: 5,
      requestedRenderConfig: { colorManagementPreset: 'default', frameRanges: ['1-5'] },
    });
    const f = est.figures!;
    expect(shown.samples!.text).toBe('1, 3, 5 of 5 frames (kept for the render)');
    expect(shown.wall!.text).toMatch(
      new RegExp(`for ${f.framesToRender} frames? left, from ${f.wallSeconds.frames} sample frames?$`),
    );
    expect(shown.compute).toMatchObject({ band: f.renderSeconds });
    expect(shown.compute!.text).toMatch(/ on CPU$/);
    expect(shown.normalized!.band).toEqual(f.normalizedSeconds);
    expect(shown.cost).toEqual({ band: f.cost, text: money(f.cost!) });
    expect(shown.memory).toEqual({ band: f.peakMemoryBytes, text: f.memory.summary });
    expect(shown.output!.band).toEqual(f.outputBytes);
    expect(shown.load!.band).toEqual(f.loadSeconds);
    expect(shown.own!.text).toBe(
      `${est.ownCost.renderSeconds.toFixed(1)} s of rendering · ${Math.round(est.ownCost.normalizedSeconds)} ` +
        `normalized seconds · cost ${est.ownCost.cost!.toFixed(2)}`,
    );
    expect(await page.$$eval('#estimate-warnings li', (lis) => lis.map((li) => li.textContent))).toEqual(est.warnings);
    expect(await page.isHidden('#estimate-form')).toBe(true);
    const sampled = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body).data.frames;
    expect(sampled.map((r) => r.frame)).toEqual([1, 3, 5]);

    // Render: the job renders the estimate's request, and the sampled frames are not rendered again.
    await page.click('#estimate-render');
    await page.waitForSelector('#estimate-render', { state: 'hidden' });
    expect(await page.isHidden('#estimate-error')).toBe(true);
    await page.waitForSelector('#job-status[data-status="completed"]', { timeout: 300_000 });
    expect((await client.getJob(id)).requestedConfig).toMatchObject({ frameRanges: ['1-5'] });
    const rows = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body).data.frames;
    expect(rows.map((r) => r.frame)).toEqual([1, 2, 3, 4, 5]);
    for (const s of sampled) expect(rows.find((r) => r.frame === s.frame)).toEqual(s);
    // The estimate stays on the completed job's page, beside what the render took.
    expect(await page.isVisible('#estimate-section')).toBe(true);
    expect(await page.getAttribute('#estimate-state', 'data-state')).toBe('ready');
    await screenshot(page, 'estimate', 'rendered');
    expect(problems).toEqual([]);
    await context.close();
  }, 600_000);

  it("cancels an estimate while the farm renders its samples: the job's Blender stops", async () => {
    // Slow frames (the benchmark's heavy monkeys: level 5, 112 samples), so Cancel comes while they render.
    const id = await submit(farm.e2e.client, await buildFixture('monkeys', { args: ['5', '112'] }));
    expect((await validationOutcome(farm.e2e.client, id)).status).toBe('validated');
    const { context, page, problems } = await signedInPage(farm.browser, farm.e2e.svc.origin, farm.e2e.svc.apiKey);
    await page.goto(`${farm.e2e.svc.origin}/#/jobs/${id}`);
    await page.click('#estimate-start');
    await page.waitForSelector('#estimate-cancel:not([hidden])', { timeout: 30_000 });
    await waitUntil('the estimate to render on the farm', () => blenderProcesses(id).length > 0, {
      timeoutMs: 120_000,
    });
    await page.click('#estimate-cancel');
    await page.waitForSelector('#estimate-state[data-state="canceled"]', { timeout: 30_000 });
    await screenshot(page, 'estimate', 'canceled');
    const service = api(farm.e2e.svc.baseUrl, farm.e2e.svc.apiKey);
    expect(EstimateEnvelope.parse((await service('GET', `/jobs/${id}/estimate`)).body).data.state).toBe('canceled');
    // The farm stops: the job's Blender ends and none of its tasks stays queued or running.
    await waitUntil('the sampling Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 60_000 });
    await waitUntil('no task of the job to run', async () => {
      const tasks = JobTaskList.parse((await service('GET', `/jobs/${id}/tasks`)).body).data;
      return tasks.every((t) => t.state !== 'running' && t.state !== 'queued');
    });
    // It may be asked for again.
    expect(await page.textContent('#estimate-start')).toBe('Estimate again');
    expect((await farm.e2e.client.getJob(id)).status).toBe('validated');
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);

  it('shows no Estimate where the service does not offer the extension', async () => {
    const id = await validatedId();
    // The same stores, served without frame statistics (and so without estimates).
    const plain = await appOn(farm.e2e.svc, { frameStats: undefined });
    try {
      const { context, page, problems } = await signedInPage(farm.browser, plain.origin, farm.e2e.svc.apiKey);
      await page.goto(`${plain.origin}/#/jobs/${id}`);
      await page.waitForSelector('#job-status[data-status="validated"]');
      // The page has asked GET /extensions and found no estimate there.
      await page.waitForSelector('#estimate-section[data-offered="false"]', { state: 'attached', timeout: 30_000 });
      expect(await page.isHidden('#estimate-section')).toBe(true);
      expect(await page.isHidden('#estimate-form')).toBe(true);
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      await plain.close();
    }
  }, 120_000);
});
