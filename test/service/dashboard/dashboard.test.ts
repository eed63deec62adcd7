// The farm dashboard in real Chromium (playwright-core, Debian's /usr/bin/chromium) against the
// real service with its in-process worker and real Blender: sign in with a key, watch a job
// progress to completed live, open its page (warning in words with what to do, finalConfig,
// preview, outputs, tasks), cancel a job, a request without the CSRF token refused, another
// workspace's job invisible, the polling fallback when the event stream is blocked, sign-out
// (the cookie then gets 401), an expired session, and the API reference at /docs. Screenshots are
// kept under the temp folder (the path is printed).
import type { BrowserContext, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { submit, tinyRender, waitUntil } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { appOn } from './app-on.js';
import { chromiumFarm, screenshot, signIn, watchedPage } from './browser.js';

const farm = chromiumFarm('the dashboard test');
const suite = farm.suite;

const row = (id: string) => `tr[data-job-id="${id}"]`;
const statusOf = (page: Page, id: string) =>
  page.$eval(`${row(id)} .status`, (el) => (el as HTMLElement).dataset.status ?? null).catch(() => null);

const shot = (page: Page, name: string) => screenshot(page, 'dashboard', name);

/** The session cookie the browser holds, as a Cookie header. */
async function cookieHeader(context: BrowserContext): Promise<string> {
  const c = (await context.cookies()).find((x) => x.name === 'rb_session');
  expect(c, 'the session cookie').toBeDefined();
  expect(c!.httpOnly).toBe(true);
  expect(c!.sameSite).toBe('Strict');
  return `rb_session=${c!.value}`;
}

suite('farm dashboard in Chromium', () => {
  it(
    'signs in, follows a real render live to completed, and shows the job page with warnings, settings, ' +
      'preview, outputs and tasks',
    async () => {
      const { client, svc } = farm.e2e;
      const { context, page, problems } = await watchedPage(farm.browser);
      await signIn(page, svc.origin, svc.apiKey);
      await page.waitForSelector('#connection[data-state="live"]');
      expect(await page.textContent('#workspace')).toBe('Workspace: studio');
      // The key left the form, and the page's storage holds nothing.
      expect(await page.inputValue('#api-key')).toBe('');
      expect(await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie])).toEqual([
        0,
        0,
        '',
      ]);

      const jobId = await submit(client, await buildFixture('missing-texture'));
      await page.waitForSelector(row(jobId), { timeout: 30_000 });
      await client.waitForStatus(jobId, ['validated'], { intervalMs: 150, timeoutMs: 90_000 });
      // Long enough (several seconds) for the page to show frames counting up between 0 and 24.
      await client.renderJob(jobId, tinyRender('1-24', { sampleCount: 64, resolution: [192, 144] }));

      const seen: string[] = [];
      const progress: string[] = [];
      let midShot = false;
      await waitUntil(
        'the job to complete in the page',
        async () => {
          const s = await statusOf(page, jobId);
          if (s && seen.at(-1) !== s) seen.push(s);
          const p = await page.textContent(`${row(jobId)} .progress-text`).catch(() => null);
          if (p && progress.at(-1) !== p) progress.push(p);
          if (!midShot && p && /^([1-9]|1\d|2[0-3]) \/ 24 frames/.test(p)) {
            midShot = true;
            await shot(page, 'jobs-rendering');
          }
          return s === 'completed';
        },
        { timeoutMs: 240_000, intervalMs: 50 },
      );
      console.log(`statuses seen: ${seen.join(' > ')}; progress texts: ${progress.join(' | ')}`);
      // Followed live, without a reload: the render was seen running with frames counting up.
      expect(seen).toContain('rendering');
      expect(seen.at(-1)).toBe('completed');
      expect(
        progress.some((p) => /^([1-9]|1\d|2[0-3]) \/ 24 frames/.test(p)),
        progress.join(' | '),
      ).toBe(true);
      await shot(page, 'jobs');

      await page.click(`${row(jobId)} a.job-name`);
      await page.waitForSelector('#view-job:not([hidden])');
      // The view shows before the job's answer fills it in: wait for its status.
      await page.waitForSelector('#job-status:not(:empty)');
      expect(await page.textContent('#job-status')).toBe('Completed');
      // The missing texture in words, with what to do.
      const warning = page.locator('#warnings li[data-code="MISSING_FILES"]');
      await warning.waitFor();
      expect(await warning.locator('.message').textContent()).toContain('MissingTex');
      expect(await warning.locator('.advice').textContent()).toMatch(/Pack the project/);
      // finalConfig as a table, the preview (a signed URL) under the CSP, the outputs as signed links.
      await page.waitForSelector('#config-table:not([hidden])');
      expect(await page.textContent('#config-table')).toMatch(/sampleCount\s*64/);
      expect(await page.textContent('#config-all')).toContain('expectedOutputs');
      await waitUntil(
        'the preview to load',
        () => page.$eval('#job-preview', (img) => (img as HTMLImageElement).naturalWidth > 0),
        { timeoutMs: 15_000 },
      );
      await page.waitForSelector('#outputs li a');
      const links = await page.$$eval('#outputs li a', (as) =>
        as.map((a) => ({ text: a.textContent, href: (a as HTMLAnchorElement).href })),
      );
      expect(links.some((l) => l.text === 'All frames (zip)')).toBe(true);
      const frame = links.find((l) => /\.png$/.test(l.text ?? ''));
      expect(frame, JSON.stringify(links.slice(0, 5))).toBeDefined();
      expect((await fetch(frame!.href)).status).toBe(200);
      // The tasks: validation, planning, the render chunks covering the 24 frames, finalize.
      await page.waitForSelector('#tasks-table:not([hidden])');
      const readTasks = () =>
        page.$$eval('#tasks-table tbody tr', (trs) =>
          trs.map((tr) => ({
            state: (tr as HTMLElement).dataset.state,
            cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
          })),
        );
      // The job turns completed inside finalize, a moment before that task ends: the page keeps
      // refreshing the table until every task has ended.
      const tasks = await waitUntil(
        'every task to show done',
        async () => {
          const t = await readTasks();
          return t.length > 0 && t.every((x) => x.state === 'done') ? t : undefined;
        },
        { timeoutMs: 15_000 },
      );
      expect(tasks.map((t) => t.cells[0])).toEqual(
        expect.arrayContaining(['Check scene', 'Plan render', 'Render', 'Finish outputs']),
      );
      const renders = tasks.filter((t) => t.cells[0] === 'Render');
      const frames = renders
        .flatMap((t) => t.cells[1]!.split(', '))
        .flatMap((r) => {
          const [a, b] = r.split('-').map(Number);
          return Array.from({ length: (b ?? a!) - a! + 1 }, (_, i) => a! + i);
        });
      expect(frames.sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
      for (const t of renders) {
        expect(t.cells[3], 'worker').not.toBe('');
        expect(Number(t.cells[4]), 'attempt').toBeGreaterThanOrEqual(1);
        expect(t.cells[5], 'duration').toMatch(/\d+(\.\d)? s|min/);
        expect(t.cells[6], 'exit reason').toBe('done');
      }
      await shot(page, 'job-page');
      expect(problems).toEqual([]);
      await context.close();
    },
    360_000,
  );

  it("cancels a job from its page with the session's CSRF token, and refuses the same request without it", async () => {
    const { svc, client } = farm.e2e;
    const { context, page, problems } = await watchedPage(farm.browser);
    await signIn(page, svc.origin, svc.apiKey);
    const job = await createJob(api(svc.baseUrl, svc.apiKey));
    const other = await createJob(api(svc.baseUrl, svc.apiKey));
    // A script on the page calling the API with the cookie but without the token: 403.
    const refused = await page.evaluate(async (id) => {
      const r = await fetch(`/api/external/v1/jobs/${id}/cancel`, { method: 'POST' });
      return [r.status, (await r.json()).name];
    }, other.id);
    expect(refused).toEqual([403, 'CSRF_TOKEN_INVALID']);
    expect((await client.getJob(other.id)).status).toBe('created');

    await page.goto(`${svc.origin}/#/jobs/${job.id}`);
    await page.waitForSelector('#view-job:not([hidden])');
    await page.waitForFunction(() => !(document.getElementById('job-cancel') as HTMLButtonElement).disabled);
    await page.click('#job-cancel');
    await page.waitForSelector('#job-status[data-status="canceled"]');
    expect((await client.getJob(job.id)).status).toBe('canceled');
    expect(await page.isDisabled('#job-cancel')).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("never shows another workspace's job, and falls back to polling when the event stream is blocked", async () => {
    const { svc } = farm.e2e;
    const rivalKey = await svc.createApiKey('rival dashboard');
    const rivalJob = await createJob(api(svc.baseUrl, rivalKey));
    // A small laptop screen.
    const { context, page } = await watchedPage(farm.browser, { width: 1024, height: 640 });
    // A proxy that drops event streams: the page must still follow the jobs.
    await page.route('**/api/external/v1/events', (route) => route.abort());
    await signIn(page, svc.origin, svc.apiKey);
    await page.waitForSelector('#connection[data-state="polling"]');
    const mine = await createJob(api(svc.baseUrl, svc.apiKey));
    await page.waitForSelector(row(mine.id), { timeout: 30_000 });
    await svc.service.ports.jobs.transition(mine.id, ['created'], 'validating');
    await page.waitForSelector(`${row(mine.id)} .status[data-status="validating"]`, { timeout: 30_000 });
    expect(await page.$(row(rivalJob.id))).toBeNull();
    // Nothing wider than the screen: the jobs table fits without scrolling sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.goto(`${svc.origin}/#/jobs/${rivalJob.id}`);
    await page.waitForFunction(
      () => document.getElementById('notice')!.textContent === 'No such job in this workspace.',
    );
    expect(await page.textContent('#view-job')).not.toContain(rivalJob.id);
    await shot(page, 'polling');
    await context.close();
  });

  it('lists the 50 newest jobs live and fetches older pages on request', async () => {
    const { svc } = farm.e2e;
    const key = await svc.createApiKey('busy studio');
    const call = api(svc.baseUrl, key);
    const made: string[] = [];
    for (let i = 0; i < 53; i++) made.push((await createJob(call)).id);
    const { context, page } = await watchedPage(farm.browser);
    await signIn(page, svc.origin, key);
    await waitUntil('the 50 newest jobs', async () => (await page.$$('#jobs-table tbody tr')).length === 50);
    expect(await page.$(row(made[0]!))).toBeNull();
    await page.getByRole('button', { name: 'Show older jobs' }).click();
    await waitUntil('every job', async () => (await page.$$('#jobs-table tbody tr')).length === 53);
    // Newest first, the older page below.
    const order = await page.$$eval('#jobs-table tbody tr', (trs) =>
      trs.map((tr) => (tr as HTMLElement).dataset.jobId),
    );
    expect(order).toEqual([...made].reverse());
    expect(await page.isVisible('#jobs-older')).toBe(false);
    await context.close();
  });

  it('signs out on the server (the cookie then gets 401), and sends an expired session back to sign-in', async () => {
    const { svc } = farm.e2e;
    const { context, page } = await watchedPage(farm.browser);
    await signIn(page, svc.origin, svc.apiKey);
    const cookie = await cookieHeader(context);
    expect((await api(svc.baseUrl, undefined)('GET', '/jobs', undefined, { headers: { cookie } })).status).toBe(200);
    await page.click('#sign-out');
    await page.waitForSelector('#view-signin:not([hidden])');
    expect((await api(svc.baseUrl, undefined)('GET', '/jobs', undefined, { headers: { cookie } })).status).toBe(401);
    await context.close();

    // A service whose clock the test moves: the session passes its absolute expiry while the page is open.
    let now = Date.now();
    const moved = await appOn(svc, { clock: () => now, eventStream: { heartbeatMs: 300 } });
    try {
      const second = await watchedPage(farm.browser);
      await signIn(second.page, moved.origin, svc.apiKey);
      await second.page.waitForSelector('#connection[data-state="live"]');
      now += svc.config.sessionMaxHours * 3_600_000 + 1000;
      await second.page.waitForSelector('#view-signin:not([hidden])', { timeout: 30_000 });
      expect(await second.page.textContent('#notice')).toBe('Your session reached its maximum length. Sign in again.');
      await shot(second.page, 'expired');
      const stale = await cookieHeader(second.context);
      expect(
        (await api(moved.baseUrl, undefined)('GET', '/jobs', undefined, { headers: { cookie: stale } })).status,
      ).toBe(401);
      await second.context.close();
    } finally {
      await moved.close();
    }
  });

  it('renders the API reference at /docs from the local OpenAPI document under the same CSP', async () => {
    const { context, page, problems } = await watchedPage(farm.browser);
    const res = await page.goto(`${farm.e2e.svc.origin}/docs`);
    expect(res?.headers()['content-security-policy']).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 });
    const paths = await page.$$eval('.opblock-summary-path', (els) =>
      els.map((e) => e.textContent?.replace(/\u200b/g, '')),
    );
    expect(paths).toEqual(expect.arrayContaining(['/jobs', '/sessions', '/events', '/jobs/{id}/tasks']));
    await shot(page, 'docs');
    expect(problems).toEqual([]);
    await context.close();
  });
});
