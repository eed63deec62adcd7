// The scheduling controls of the dashboard's job page, in real Chromium against the real service
// with real Blender: a job waiting for another shows what it waits for (a link), takes a new
// priority, pauses and resumes; a job rendered with the approval gate shows "Approve previews"
// once its previews are held, and the click lets the other frames render to completion.
import { expect, it } from 'vitest';
import { submit, tinyRender, validationOutcome, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

const farm = chromiumFarm('the scheduling dashboard test');
const suite = farm.suite;

async function validated(): Promise<string> {
  const { client } = farm.e2e;
  const id = await submit(client, await buildFixture('basic'));
  expect((await validationOutcome(client, id)).status).toBe('validated');
  return id;
}

suite('scheduling on the job page (Chromium)', () => {
  it('shows what a job waits for, changes its priority, pauses and resumes it', async () => {
    const { client, svc } = farm.e2e;
    const first = await validated();
    const second = await validated();
    await client.renderJob(second, { ...tinyRender('1'), scheduling: { dependsOn: [first] } });
    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey);
    await page.goto(`${svc.origin}/#/jobs/${second}`);
    await page.waitForSelector(`#scheduling-line a[data-job-id="${first}"]`);
    expect(await page.textContent('#scheduling-line')).toContain('Priority 50');
    await page.getByLabel('Priority (0-100, higher first)').fill('85');
    await page.getByRole('button', { name: 'Set priority' }).click();
    await page.waitForFunction(() => document.getElementById('scheduling-line')?.textContent?.includes('Priority 85'));
    expect((await client.getJob(second)).scheduling?.priority).toBe(85);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor({ state: 'visible' });
    expect((await client.getJob(second)).scheduling?.paused).toBe(true);
    await screenshot(page, 'scheduling', 'paused-waiting');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor({ state: 'visible' });
    expect((await client.getJob(second)).scheduling?.paused).toBe(false);
    await client.cancelJob(second);
    await client.cancelJob(first);
    expect(problems).toEqual([]);
    await context.close();
  }, 240_000);

  it('approves held previews with one click, and the job completes', async () => {
    const { client, svc } = farm.e2e;
    const id = await validated();
    await client.renderJob(id, { ...tinyRender('1-5'), scheduling: { approvePreviews: true } });
    await waitUntil('the previews rendered', async () => (await client.getJobProgress(id)).framesDone === 3, {
      timeoutMs: 120_000,
    });
    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey);
    await page.goto(`${svc.origin}/#/jobs/${id}`);
    const approve = page.getByRole('button', { name: 'Approve previews' });
    await approve.waitFor({ state: 'visible' });
    expect(await page.textContent('#scheduling-line')).toContain('previews: frames 1, 3, 5');
    await screenshot(page, 'scheduling', 'awaiting-approval');
    await approve.click();
    await page.waitForSelector('#job-status[data-status="completed"]', { timeout: 120_000 });
    expect(await page.isHidden('#job-scheduling')).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  }, 240_000);
});
