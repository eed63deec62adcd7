// The job page's rendered frames in real Chromium against the real service, worker, Blender and
// ffmpeg: while the job renders the latest finished frame shows live; once it completed the strip
// holds one thumbnail per frame (made by the worker through ffmpeg: 320x240 frames become 256 px
// JPEGs), the flip-book advances when played and follows the scrubber, and another workspace gets
// 404 for the thumbnails. Screenshots are kept under the temp folder.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { ThumbnailList } from '../../../shared/api/thumbnails.js';
import { submit, tinyRender, validationOutcome, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { api } from '../../helpers/http.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

const farm = chromiumFarm('the frame thumbnails test');
const suite = farm.suite;

const FRAMES = 6;
const flipFrame = (page: Page) => page.$eval('#flipbook', (el) => Number((el as HTMLElement).dataset.frame));
const stripImages = (page: Page) =>
  page.$$eval('#thumbs-strip img', (imgs) =>
    imgs.map((i) => ({ alt: i.getAttribute('alt'), w: (i as HTMLImageElement).naturalWidth })),
  );

suite('rendered frames on the job page', () => {
  it('shows the latest frame live, then a strip of one thumbnail per frame and a flip-book that plays', async () => {
    const { client, svc } = farm.e2e;
    // 320x240 (above the thumbnail size: ffmpeg scales them), slow enough that the page opens
    // with a frame done and frames left.
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender(`1-${FRAMES}`, { sampleCount: 64, resolution: [320, 240] }));
    await waitUntil('a frame done', async () => ((await client.getJobProgress(id)).framesDone ?? 0) >= 1, {
      timeoutMs: 120_000,
      intervalMs: 50,
    });
    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey, {
      width: 1280,
      height: 1000,
    });
    await page.goto(`${svc.origin}/#/jobs/${id}`);

    // While it renders: the latest finished frame, its image loaded, named in its caption.
    await page.waitForSelector('#live-frame-box:not([hidden])', { timeout: 60_000 });
    expect((await client.getJob(id)).status).toBe('rendering');
    expect(await page.textContent('#live-frame-caption')).toMatch(/^Latest finished frame: \d+$/);
    expect(await page.$eval('#live-frame', (img) => (img as HTMLImageElement).naturalWidth)).toBe(256);
    await screenshot(page, 'thumbnails', 'rendering');

    const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 300, timeoutMs: 300_000 });
    expect(done.status).toBe('completed');
    // Once completed: one thumbnail per frame, each loaded (256 px wide: made by ffmpeg from 320 px frames).
    await waitUntil(
      'a loaded thumbnail for every frame',
      async () => {
        const imgs = await stripImages(page);
        return imgs.length === FRAMES && imgs.every((i) => i.w === 256);
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect((await stripImages(page)).map((i) => i.alt)).toEqual(
      Array.from({ length: FRAMES }, (_, i) => `Frame ${i + 1}`),
    );
    await page.waitForSelector('#live-frame-box', { state: 'hidden' });
    // Each frame of the strip links to its file once the job completed, and a download of them all stays.
    await waitUntil('the strip linked to the frame files', async () =>
      /f_0003\.png/.test(
        await page.$eval('#thumbs-strip li[data-frame="3"] a', (a) =>
          decodeURIComponent((a as HTMLAnchorElement).href),
        ),
      ),
    );
    expect(await page.textContent('#outputs')).toContain('All frames (zip)');

    // The flip-book: Play advances through the frames at the shot's fps; Pause stops it.
    expect(await flipFrame(page)).toBe(1);
    expect(await page.textContent('#flipbook-frame')).toMatch(/^Frame 1 · 1\/6 · 24 fps$/);
    await page.click('#flipbook-play');
    const seen = new Set<number>();
    await waitUntil(
      'the flip-book to go past several frames',
      async () => {
        seen.add(await flipFrame(page));
        return seen.size >= 4;
      },
      { timeoutMs: 20_000, intervalMs: 10 },
    );
    await page.click('#flipbook-play');
    expect(await page.$eval('#flipbook', (el) => (el as HTMLElement).dataset.playing)).toBe('false');
    // The scrubber shows the frame it points at; the canvas holds the thumbnail's pixels.
    await page.$eval('#flipbook-scrub', (el) => {
      const input = el as HTMLInputElement;
      input.value = '4';
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    expect(await flipFrame(page)).toBe(5);
    expect(
      await page.$eval('#flipbook-canvas', (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]),
    ).toEqual([256, 192]);
    await screenshot(page, 'thumbnails', 'completed');
    expect(problems).toEqual([]);
    await context.close();

    // What the page showed is the API's list; another workspace finds no such job.
    const list = ThumbnailList.parse((await api(svc.baseUrl, svc.apiKey)('GET', `/jobs/${id}/thumbnails`)).body);
    expect(list.data.thumbnails.map((t) => t.frame)).toEqual(Array.from({ length: FRAMES }, (_, i) => i + 1));
    expect(list.data.fps).toBe(24);
    const rival = api(svc.baseUrl, await svc.createApiKey('rival studio'));
    expect((await rival('GET', `/jobs/${id}/thumbnails`)).status).toBe(404);
    expect((await rival('GET', `/jobs/${id}/thumbnails/image?frame=1`)).status).toBe(404);
  }, 480_000);
});
