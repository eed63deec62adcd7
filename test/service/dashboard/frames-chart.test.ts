// The job page's frame statistics in real Chromium against the real service, worker and Blender:
// while the job renders the page shows the ETA with its band; the chart (uPlot, served by the
// service, under its strict CSP) gets one point per finished frame, and the frames route and the
// summary agree with it. Screenshots are kept under the temp folder.
import { expect, it } from 'vitest';
import { FrameStatsPage } from '../../../shared/api/frame-stats.js';
import { renderingPartway, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { api } from '../../helpers/http.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

const farm = chromiumFarm('the frame chart test');
const suite = farm.suite;

const FRAMES = 10;
const points = (page: import('playwright-core').Page) =>
  page.$eval('#frames-chart', (el) => Number((el as HTMLElement).dataset.points ?? 0));

suite('frame chart and ETA on the job page', () => {
  it('shows the ETA band while frames render and one chart point per finished frame', async () => {
    const { client, svc } = farm.e2e;
    // Slow frames, so that the page opens with frames done and frames left.
    const id = await renderingPartway(client, await buildFixture('basic'), `1-${FRAMES}`, 2048, 2);
    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey, {
      width: 1280,
      height: 1000,
    });
    await page.goto(`${svc.origin}/#/jobs/${id}`);

    // While it renders: the ETA in words with its band, and the chart with the frames so far.
    await page.waitForSelector('#job-eta:not([hidden])', { timeout: 60_000 });
    expect(await page.textContent('#job-eta')).toMatch(/^About .+ left \(.+ – .+\), from \d+ frames? on \d+ slots?$/);
    // One ETA on the page: the progress line leaves its own out meanwhile.
    await waitUntil(
      'the progress line without its own ETA',
      async () => !/left/.test((await page.textContent('#job-progress-text')) ?? ''),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await waitUntil('a chart point', async () => (await points(page)) >= 1, { timeoutMs: 60_000, intervalMs: 200 });
    expect(await page.$$eval('#frames-chart canvas', (els) => els.length)).toBeGreaterThan(0);
    await screenshot(page, 'frames', 'rendering');

    const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 300, timeoutMs: 300_000 });
    expect(done.status).toBe('completed');
    // Once it completed: every frame is a point, the ETA is gone, the summary counts them all.
    await waitUntil('a point for every frame', async () => (await points(page)) === FRAMES, {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    await page.waitForSelector('#job-eta', { state: 'hidden', timeout: 60_000 });
    expect(await page.textContent('#frames-summary')).toMatch(
      new RegExp(`^${FRAMES} frames finished · median [\\d.]+ s a frame`),
    );
    const stats = FrameStatsPage.parse((await api(svc.baseUrl, svc.apiKey)('GET', `/jobs/${id}/frames`)).body).data;
    expect(stats.frames.map((f) => f.frame)).toEqual(Array.from({ length: FRAMES }, (_, i) => i + 1));
    // Rendered on this machine's CPU: Blender's RAM peak, the device, the slot and the build are there.
    for (const f of stats.frames) {
      expect(f).toMatchObject({ attempt: 1, device: 'CPU' });
      expect(f.renderSeconds).toBeGreaterThan(0);
      expect(f.peakMemoryBytes).toBeGreaterThan(0);
      expect(f.slot).toMatch(/\/cpu-\d+$/);
      expect(f.blenderVersion).toMatch(/^\d+\.\d+/);
    }
    await screenshot(page, 'frames', 'completed');
    expect(problems).toEqual([]);
    await context.close();
  }, 480_000);
});
