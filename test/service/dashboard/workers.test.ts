// The dashboard's workers page in real Chromium (playwright-core, Debian's /usr/bin/chromium)
// against the real service with its in-process worker and real Blender: the worker with its
// slots, Blender build and heartbeat; a real render shows the render slot busy with a link to the
// job, the queue by kind, then the slot idle again once the job completed, without a reload.
// Screenshots are kept under the temp folder (the path is printed).
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { submit, tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

const farm = chromiumFarm('the workers page test', { worker: { heartbeat: { intervalMs: 1000 } } });
const suite = farm.suite;

const shot = (page: Page, name: string) => screenshot(page, 'workers', name);

const renderSlot = 'article.worker tr[data-slot-id="cpu-0"]';

suite('workers page in Chromium', () => {
  it('shows the worker, then its render slot busy with a real render of the job, then idle', async () => {
    const { client, svc } = farm.e2e;
    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey, {
      width: 1280,
      height: 900,
    });
    await page.getByRole('link', { name: 'Workers' }).click();
    await page.waitForSelector('#view-workers:not([hidden])');
    expect(page.url()).toMatch(/#\/workers$/);

    await page.waitForSelector(`${renderSlot}[data-state="idle"]`, { timeout: 30_000 });
    const card = page.locator('article.worker').first();
    expect(await card.getAttribute('data-state')).toBe('running');
    expect(await card.locator('h2').textContent()).toMatch(/Running/);
    expect(await card.textContent()).toMatch(/Blender:\s*\d+\.\d+/);
    expect(await card.locator('.heartbeat-age').textContent()).toMatch(/just now|\d+ s ago/);
    expect(await page.locator('article.worker tr[data-slot-id="control"]').count()).toBe(1);
    // What a frame may use in the slot (the machine's memory here), and the worker's memory and tags.
    expect(await page.textContent(`${renderSlot} .slot-memory`)).toMatch(/^\d+\.\d GiB$/);
    expect(await card.textContent()).toMatch(/Tags:\s*none/);
    expect(await card.textContent()).toMatch(/Memory:\s*\d+\.\d GiB/);
    expect(await page.textContent('#queue-table tr[data-kind="render-chunk"] .queued')).toBe('0');
    await shot(page, 'idle');

    const jobId = await submit(client, await buildFixture('basic'));
    await client.waitForStatus(jobId, ['validated'], { intervalMs: 150, timeoutMs: 90_000 });
    // Long enough (several seconds of frames) for the page to catch the slot busy.
    await client.renderJob(jobId, tinyRender('1-40', { sampleCount: 32, resolution: [160, 120] }));
    const link = page.locator(`${renderSlot} a.slot-job[href="#/jobs/${jobId}"]`);
    await link.first().waitFor({ timeout: 90_000 });
    expect(await link.first().textContent()).toBe('basic.blend');
    expect(await page.locator(renderSlot).getAttribute('data-state')).toMatch(/^(busy|loading)$/);
    expect(await page.textContent(`${renderSlot} .slot-task`)).toMatch(/Render frames basic\.blend · frames \d/);
    await shot(page, 'busy');

    await client.waitForStatus(jobId, ['completed'], { intervalMs: 200, timeoutMs: 240_000 });
    await waitUntil(
      'the render slot to show idle again',
      async () =>
        (await page.locator(renderSlot).getAttribute('data-state')) === 'idle' &&
        (await page.locator(`${renderSlot} a.slot-job`).count()) === 0,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(await page.textContent('#queue-table tr[data-kind="render-chunk"] .running')).toBe('0');
    await shot(page, 'idle-after-render');

    // The job link of a busy slot leads to the job's page; here from the address the link had.
    await page.goto(`${svc.origin}/#/jobs/${jobId}`);
    await page.waitForSelector('#view-job:not([hidden])');
    // The view shows before the job's answer fills it in: wait for its status.
    await page.waitForSelector('#job-status:not(:empty)');
    expect(await page.textContent('#job-status')).toBe('Completed');
    expect(problems).toEqual([]);
    await context.close();
  }, 420_000);
});
