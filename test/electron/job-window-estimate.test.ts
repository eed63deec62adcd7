// The job window's Estimate and flip-book (daemon/ui/estimate.js, flipbook.js) in real Chromium
// (playwright-core, Debian's /usr/bin/chromium) against a real daemon, a reference service with a
// worker and real Blender. The tray app opens this same page in an Electron window (not runnable
// here: no Electron binary). Estimate on a validated job goes through the daemon's submission of mode
// `estimate` (the add-on's route) and shows time, cost and memory with their bands and the frames they
// rest on; Render then renders that job by id; the flip-book plays the job's thumbnails in frame order
// at the shot's fps, looping. Cancel estimate, clicked while the farm's Blender renders the samples,
// ends it canceled (the row says so) and that Blender stops.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonThumbnails } from '../../shared/daemon/job-schemas.js';
import { Estimate } from '../../shared/api/estimate.js';
import { blenderProcesses, startE2E, submit, validationOutcome, waitUntil, type E2E } from '../helpers/e2e.js';
import { buildFixture, buildFixtureZip } from '../helpers/fixtures.js';
import type { RunningBridgeDaemon } from '../../daemon/assemble.js';
import { daemonCall, startTestBridge } from '../daemon/harness.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../scripts/chromium.mjs';

const CHROMIUM = CHROMIUM_PATH;
const ready = existsSync(CHROMIUM) && spawnSync('sh', ['-c', 'command -v blender']).status === 0;
if (!ready) {
  if (process.env.CI === 'true') throw new Error(`the job window estimate test needs ${CHROMIUM} and blender`);
  console.warn(
    `skipping the job window estimate test: ${CHROMIUM} or blender missing (apt-get install chromium blender)`,
  );
}
const suite = ready ? describe : describe.skip;
const SCREENSHOT = path.join(tmpdir(), 'renderbridge-test-results', 'job-window-estimate.png');

let e2e: E2E;
let daemon: RunningBridgeDaemon;
let browser: Browser;
let work: string;

beforeAll(async () => {
  if (!ready) return;
  work = await mkdtemp(path.join(tmpdir(), 'rb-job-window-estimate-'));
  e2e = await startE2E({ estimateRates: 'CPU=3.6' });
  // The full daemon (submissions included), as the tray app runs it.
  daemon = await startTestBridge({
    serviceUrl: e2e.svc.baseUrl,
    apiKey: e2e.svc.apiKey,
    work,
    stateDir: path.join(work, 'state'),
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await daemon?.close();
  await e2e?.svc.close();
  if (work) await rm(work, { recursive: true, force: true });
});

suite('job window Estimate and flip-book in Chromium', () => {
  it('estimates a validated job, renders it keeping the samples, and plays its frames at the shot fps', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content.Security.Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    page.on('pageerror', (err) => console.warn(`page error: ${err.message}`));
    page.on('console', (m) => console.warn(`page console ${m.type()}: ${m.text()}`));
    await page.goto(`${daemon.origin}/ui/#token=${daemon.token}`);
    await page.waitForSelector('#connection[data-state="live"]');

    const zip = path.join(work, 'project.zip');
    await buildFixtureZip(['basic'], zip);
    const id = await submit(e2e.client, zip);
    expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
    const row = `tr[data-job-id="${id}"]:not(.estimate-row):not(.frames-row)`;
    await page.waitForSelector(`${row} button.estimate:visible`, { timeout: 30_000 }).catch(async (err: Error) => {
      const html = await page.$eval('body', (b) => b.innerHTML).catch(() => '');
      throw new Error(`${err.message}; the page: ${html.slice(0, 4000)}`);
    });
    await page.click(`${row} button.estimate`);

    const est = `tr.estimate-row[data-job-id="${id}"]`;
    const state = await waitUntil(
      'the estimate to end in the page',
      async () => {
        const st = await page.getAttribute(est, 'data-state').catch(() => null);
        return (st === 'ready' || st === 'failed') && st;
      },
      { timeoutMs: 240_000, intervalMs: 200 },
    ).catch(async (err: Error) => {
      const html = await page.$eval('body', (b) => b.innerHTML).catch(() => '');
      throw new Error(`${err.message}; the page: ${html.slice(0, 4000)}`);
    });
    expect(state, (await page.textContent(`${est} .estimate-head`)) ?? '').toBe('ready');
    await page.waitForSelector(`${est} button.render-estimated:visible`);
    const lines = await page.$$eval(`${est} ul.estimate-lines li`, (lis) => lis.map((li) => li.textContent ?? ''));
    console.log(`the job window's estimate:\n${lines.join('\n')}`);
    const e = Estimate.parse((await daemonCall(daemon)('GET', `/jobs/${id}/estimate`)).json);
    expect(e.state).toBe('ready');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Time on the farm now: \d.* \(.* to .*\) for \d+ frame\(s\) left$/),
        expect.stringMatching(/^Compute: .* on CPU$/),
        expect.stringMatching(/^Cost: \d+\.\d\d \(\d+\.\d\d to \d+\.\d\d\)$/),
        expect.stringMatching(/^Memory: Peak memory about /),
        `Rests on ${e.figures!.wallSeconds.frames} sample(s) from frames ${e.sampleFrames.join(', ')}`,
      ]),
    );
    expect(e.sampleFrames.length).toBeGreaterThanOrEqual(3);
    expect(await page.textContent(`${est} .estimate-head`)).toBe(
      'Estimate ready: Render renders this job, keeping the sampled frames.',
    );

    // Render: the same job, by id; it completes, and no sampled frame is rendered again.
    await page.click(`${est} button.render-estimated`);
    await waitUntil(
      'the job to complete in the page',
      async () => (await page.textContent(`${row} .status`)) === 'completed',
      { timeoutMs: 240_000 },
    );
    const frames = await e2e.client.listJobThumbnails(id, { pageSize: 100 });
    expect(frames.pagination.total).toBe(24);

    // The flip-book plays the 24 thumbnails in frame order at the shot's fps, looping.
    const list = DaemonThumbnails.parse((await daemonCall(daemon)('GET', `/jobs/${id}/thumbnails`)).json);
    expect(list.fps).toBeGreaterThan(0);
    await page.click(`${row} button.frames`);
    const book = `tr.frames-row[data-job-id="${id}"] .flipbook`;
    await page.waitForSelector(`${book}[data-count="24"]`, { timeout: 30_000 });
    expect(Number(await page.getAttribute(book, 'data-fps'))).toBe(list.fps);
    await page.evaluate((sel) => {
      const el = document.querySelector(sel) as HTMLElement;
      const seen: string[] = ((window as unknown as { seen: string[] }).seen = []);
      new MutationObserver(() => seen.push(el.dataset.frame ?? '')).observe(el, {
        attributes: true,
        attributeFilter: ['data-frame'],
      });
    }, book);
    await page.click(`${book} button.play`);
    expect(await page.getAttribute(book, 'data-playing')).toBe('true');
    expect(Number(await page.getAttribute(book, 'data-interval-ms'))).toBe(Math.round(1000 / list.fps!));
    const seen = await waitUntil(
      'the flip-book to loop once',
      async () => {
        const s = await page.evaluate(() => (window as unknown as { seen: string[] }).seen.map(Number));
        return s.length >= 30 && s;
      },
      { timeoutMs: 30_000 },
    );
    // Each frame is followed by the next one, and 24 by 1: in order, looping.
    for (let i = 1; i < seen.length; i++) expect(seen[i], seen.join(' ')).toBe((seen[i - 1]! % 24) + 1);
    expect(await page.$eval(`${book} img.flip`, (img) => (img as HTMLImageElement).src.startsWith('blob:'))).toBe(true);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.click(`${book} button.play`);
    expect(await page.getAttribute(book, 'data-playing')).toBe('false');
    expect(cspErrors).toEqual([]);
    console.log(`job window estimate screenshot: ${SCREENSHOT}`);
    await page.close();
  }, 600_000);

  it("Cancel estimate, clicked while the farm renders the samples, stops the job's Blender", async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    page.on('pageerror', (err) => console.warn(`page error: ${err.message}`));
    await page.goto(`${daemon.origin}/ui/#token=${daemon.token}`);
    await page.waitForSelector('#connection[data-state="live"]');
    // Slow frames (the benchmark's heavy monkeys: level 5, 112 samples), so Cancel comes while they render.
    const id = await submit(e2e.client, await buildFixture('monkeys', { args: ['5', '112'] }));
    expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
    const row = `tr[data-job-id="${id}"]:not(.estimate-row):not(.frames-row)`;
    await page.waitForSelector(`${row} button.estimate:visible`, { timeout: 30_000 });
    await page.click(`${row} button.estimate`);
    const est = `tr.estimate-row[data-job-id="${id}"]`;
    await page.waitForSelector(`${est} button.cancel-estimate:visible`, { timeout: 120_000 });
    await waitUntil('the estimate to render on the farm', () => blenderProcesses(id).length > 0, {
      timeoutMs: 120_000,
    });
    await page.click(`${est} button.cancel-estimate`);
    // The row says it was canceled, in words, once the submission ended ESTIMATE_CANCELED.
    await waitUntil(
      'the canceled estimate to end in the page',
      async () => /canceled before it was ready/.test((await page.textContent(`${est} .estimate-head`)) ?? ''),
      { timeoutMs: 60_000 },
    );
    expect(await page.getAttribute(est, 'data-state')).toBe('canceled');
    expect(await page.textContent(`${est} .estimate-head`)).toMatch(/the job stays validated/);
    expect(await page.isHidden(`${est} button.cancel-estimate`)).toBe(true);
    expect(await page.isHidden(`${est} button.render-estimated`)).toBe(true);
    expect(Estimate.parse((await daemonCall(daemon)('GET', `/jobs/${id}/estimate`)).json).state).toBe('canceled');
    // The farm stopped: the job's Blender ends; the job stays validated.
    await waitUntil('the sampling Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 60_000 });
    expect((await e2e.client.getJob(id)).status).toBe('validated');
    await page.close();
  }, 300_000);
});
