// The farm share page and the job page's queue ahead, in real Chromium against the real service:
// a job of this workspace behind another workspace's higher-priority frames shows how many frames
// of how many jobs are ahead, and the Farm share page shows both workspaces, the other unnamed,
// with its share of the busy slots. The test plays the workers (test/helpers/farm-share.ts), so
// the counts are known exactly; claiming the frames ahead moves the job to first in line.
import { expect, it } from 'vitest';
import { queueChunks, reportBusyWorker } from '../../helpers/farm-share.js';
import { createJob } from '../../helpers/flow.js';
import { api } from '../../helpers/http.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';

// No in-process worker: it would claim the test's chunks.
const farm = chromiumFarm('the farm share dashboard test', { workers: 0 });

farm.suite('farm share and queue ahead (Chromium)', () => {
  it("shows the queue ahead of a job and each workspace's share", async () => {
    const { svc } = farm.e2e;
    const mine = await createJob(api(svc.baseUrl, svc.apiKey));
    const theirs = await createJob(api(svc.baseUrl, await svc.createApiKey('other-studio')));
    await queueChunks(svc, theirs, 2, 60);
    await queueChunks(svc, mine, 3, 50);
    await reportBusyWorker(svc, theirs);

    const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey);
    await page.goto(`${svc.origin}/#/jobs/${mine.id}`);
    await page.waitForFunction(() =>
      document.getElementById('queue-ahead')?.textContent?.includes('Queue ahead: 2 frames of 1 other job'),
    );
    await screenshot(page, 'farm-share', 'queue-ahead');

    await page.getByRole('link', { name: 'Farm share' }).click();
    await page.waitForSelector('#view-share:not([hidden]) #share-table tbody tr');
    const rows = await page.$$eval('#share-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent?.trim() ?? '')),
    );
    expect(rows[0]?.slice(0, 3)).toEqual(['Your workspace', '1', '50 %']);
    expect(rows[0]?.[5]).toBe('3');
    // The submitter by its key's label (the test service's key is labeled "test"), not its user id.
    expect(rows[1]?.[0]).toBe('test');
    expect(rows[2]?.slice(0, 5)).toEqual(['Another workspace 1', '1', '50 %', '100 %', '1']);
    expect(rows[2]?.[5]).toBe('2');
    expect(await page.textContent('#share-slots')).toBe('1 of 2 live render slots busy');
    expect(await page.textContent('#view-share')).not.toContain(theirs.workspaceId);
    await screenshot(page, 'farm-share', 'share');

    // The other workspace's frames are claimed: this job's next frame is first in line.
    for (let i = 0; i < 2; i++) await svc.service.ports.queue.claim('render-1:1', ['render-chunk'], 60_000);
    await page.goto(`${svc.origin}/#/jobs/${mine.id}`);
    await page.waitForFunction(() => document.getElementById('queue-ahead')?.textContent?.includes('first in line'));
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
