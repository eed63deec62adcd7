// The job window's scheduling controls (daemon/ui/scheduling.js) in real Chromium against a real
// daemon and the real service: an unfinished job's priority is set, it is paused and resumed, and
// its held previews are approved, each through the daemon's route (its API key, not the page's) and
// seen on the service. The tray app opens this same page in an Electron window (not runnable here:
// no Electron binary). The test plays the worker (moving jobs through the ports), as the API tests do.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { api } from '../helpers/http.js';
import { waitUntil } from '../helpers/e2e.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startTestDaemon, type TestDaemon } from '../daemon/harness.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../scripts/chromium.mjs';
import { renderingWithApproval } from '../helpers/gated-job.js';

const ready = existsSync(CHROMIUM_PATH);
if (!ready) {
  if (process.env.CI === 'true') throw new Error(`the job window scheduling test needs ${CHROMIUM_PATH}`);
  console.warn(`skipping the job window scheduling test: ${CHROMIUM_PATH} missing (apt-get install chromium)`);
}
const suite = ready ? describe : describe.skip;
const SCREENSHOT = path.join(tmpdir(), 'renderbridge-test-results', 'job-window-scheduling.png');

let svc: TestService;
let td: TestDaemon;
let browser: Browser;

beforeAll(async () => {
  if (!ready) return;
  svc = await startTestService();
  td = await startTestDaemon({ serviceUrl: svc.baseUrl, pollActiveMs: 200, pollIdleMs: 500 }, { apiKey: svc.apiKey });
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await td?.close();
  await svc?.close();
});

suite('job window scheduling controls in Chromium', () => {
  it('sets the priority, pauses, resumes and approves the previews of an unfinished job', async () => {
    const call = api(svc.baseUrl, svc.apiKey);
    const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
    const job = await renderingWithApproval(svc, call);
    // The gate holds the frames after the previews once they are planned and rendered; the test plays that.
    const rec = (await svc.service.ports.jobs.getById(job.id))!;
    const s = rec.job.scheduling!;
    await svc.service.ports.jobs.update(job.id, { scheduling: { ...s, previews: { frames: [1], gate: 'waiting' } } });

    const page = await browser.newPage({ viewport: { width: 1100, height: 420 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content.Security.Policy/i.test(m.text())) problems.push(m.text());
    });
    await page.goto(`${td.daemon.origin}/ui/#token=${td.daemon.token}`);
    const row = `tr[data-job-id="${job.id}"]:not(.estimate-row):not(.frames-row)`;
    const line = () => page.textContent(`${row} .scheduling-line`);
    await page.waitForSelector(`${row} .scheduling-line`, { timeout: 30_000 });
    await waitUntil('the priority and the held previews shown', async () =>
      (await line())?.includes('Priority 50 · previews wait for approval'),
    );

    await page.fill(`${row} input.priority`, '80');
    await page.click(`${row} button.set-priority`);
    await waitUntil('the new priority shown', async () => (await line())?.startsWith('Priority 80'));
    expect((await client.getJob(job.id)).scheduling?.priority).toBe(80);

    await page.click(`${row} button.pause`);
    await page.waitForSelector(`${row} button.resume:visible`);
    expect((await client.getJob(job.id)).scheduling?.paused).toBe(true);
    expect(await line()).toContain('paused: no new frame starts');
    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.click(`${row} button.resume`);
    await page.waitForSelector(`${row} button.pause:visible`);
    expect((await client.getJob(job.id)).scheduling?.paused).toBe(false);

    await page.click(`${row} button.approve`);
    await page.waitForSelector(`${row} button.approve`, { state: 'hidden' });
    expect((await client.getJob(job.id)).scheduling?.previews?.gate).toBe('approved');

    // A bad priority is refused in the page, before any call.
    await page.fill(`${row} input.priority`, '101');
    await page.click(`${row} button.set-priority`);
    await page.waitForSelector('#message:not([hidden])');
    expect(await page.textContent('#message')).toBe('A priority is a whole number 0-100.');
    expect((await client.getJob(job.id)).scheduling?.priority).toBe(80);

    // A finished job has no controls.
    await client.cancelJob(job.id);
    await page.waitForSelector(`${row} .scheduling`, { state: 'hidden', timeout: 30_000 });
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
