// The job page's task log in real Chromium against the real service, worker and Blender: a task
// log opened while Blender writes it grows on the page without a reload, the search box
// highlights matching lines, can hide the others and jumps between matches, an earlier attempt
// can be picked, and the page keeps its strict CSP. Screenshots are kept under the temp folder.
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { submit, tinyRender, validationOutcome, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

const farm = chromiumFarm('the task log page test');
const suite = farm.suite;

const shot = (page: Page, name: string) => screenshot(page, 'task-log', name);

const lineCount = (page: Page) => page.$$eval('#log-text .log-line', (els) => els.length);

suite('task log on the job page', () => {
  it('opens a task log while Blender writes it, sees it grow, searches it and jumps between matches', async () => {
    const { client, svc } = farm.e2e;
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    // Frames slow enough that a render task is still running when the page opens its log.
    // No previews first: their one-frame chunks would end before the page follows their log.
    await client.renderJob(id, { ...tinyRender('1-4', { sampleCount: 2048 }), scheduling: { previewFrames: false } });
    const chunk = await waitUntil(
      'a render task writing its log',
      async () =>
        (await client.jobLogIndex(id)).tasks.find(
          (t) => t.kind === 'render-chunk' && t.attempts.some((a) => a.live && a.storedBytes > 0),
        ),
      { timeoutMs: 120_000, intervalMs: 200 },
    );

    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey, {
      width: 1280,
      height: 1000,
    });
    await page.goto(`${svc.origin}/#/jobs/${id}`);
    await page.getByRole('button', { name: `Log of task ${chunk.id}` }).click();
    await page.waitForSelector('#log-section:not([hidden]) #log-text .log-line');
    expect(await page.textContent('#log-h')).toContain(chunk.id);

    // The log grows while Blender renders: more lines arrive without any reload.
    const first = await lineCount(page);
    await waitUntil('the open log to grow', async () => (await lineCount(page)) > first, {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    expect(await page.textContent('#log-state')).toMatch(/Following/);
    await shot(page, 'live');

    await page.getByLabel('Search the log').fill('fra:');
    const matches = await page.$$eval('#log-text .log-line.match', (els) => els.length);
    expect(matches).toBeGreaterThan(0);
    expect(await page.$$eval('#log-text .log-line.match mark', (els) => els.map((e) => e.textContent))).toContain(
      'Fra:',
    );
    expect(await page.textContent('#log-count')).toMatch(new RegExp(`^0 / \\d+ matches$`));
    await page.getByRole('button', { name: 'Next', exact: true }).click();
    await page.getByRole('button', { name: 'Next', exact: true }).click();
    expect(await page.textContent('#log-count')).toMatch(/^2 \/ \d+ matches$/);
    expect(await page.$$eval('#log-text .log-line.current', (els) => els.length)).toBe(1);
    expect(await page.$eval('#log-text .log-line.current', (el) => el.textContent ?? '')).toMatch(/Fra:/);
    await page.getByRole('button', { name: 'Previous', exact: true }).click();
    expect(await page.textContent('#log-count')).toMatch(/^1 \/ \d+ matches$/);
    await page.getByLabel('matching lines only').check();
    const visible = await page.$$eval('#log-text .log-line', (els) =>
      els.filter((e) => !(e as HTMLElement).hidden).map((e) => e.textContent ?? ''),
    );
    expect(visible.length).toBeGreaterThan(0);
    expect(visible.every((t) => /fra:/i.test(t))).toBe(true);
    await shot(page, 'search');
    await page.getByLabel('matching lines only').uncheck();
    await page.getByLabel('Search the log').fill('no such text anywhere');
    expect(await page.textContent('#log-count')).toBe('No matches');

    // Once the job completes, the log of that task says how it ended, and the follow stops.
    const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 300, timeoutMs: 300_000 });
    expect(done.status).toBe('completed');
    await page.waitForSelector('#log-state:text("Complete")', { timeout: 60_000 });
    expect(await page.textContent('#log-text')).toMatch(/attempt ended: done/);
    await page.getByLabel('Search the log').fill('');
    await shot(page, 'complete');
    await page.getByRole('button', { name: 'Close' }).click();
    expect(await page.isHidden('#log-section')).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  }, 480_000);
});
