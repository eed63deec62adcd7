// "Requeue a failed job" from the dashboard's job page, in real Chromium against the real service
// with real Blender: a render fails partway (its Blender killed, one attempt allowed), the page
// offers Requeue, the click opens the new job, which renders only the frames the failed one had
// not finished and completes; the links both ways are on both pages; then "Re-render frames…" on
// the completed job renders the one frame asked. Screenshots are kept under the temp folder (the
// path is printed).
import { existsSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import type { JobTask } from '../../../shared/api/dashboard.js';
import { blenderProcesses, renderingPartway, waitUntil, workDirOf } from '../../helpers/e2e.js';
import { buildFixture } from '../../helpers/fixtures.js';
import { chromiumFarm, screenshot, signedInPage } from './browser.js';
import { api } from '../../helpers/http.js';

/** Samples making a 64x48 frame take about half a second here, so the render can be stopped partway. */
const SLOW_SAMPLES = 384;
const FRAMES = [1, 2, 3, 4, 5, 6, 7, 8];

// One attempt per task: the killed Blender fails the job at once.
const farm = chromiumFarm('the requeue dashboard test', { worker: { runtime: { maxAttempts: 1, retryBaseMs: 100 } } });
const suite = farm.suite;

const shot = (page: Page, name: string) => screenshot(page, 'requeue', name);

/** A job that failed partway: frames 1-8 slowly, its Blender killed once 2 frames were done. */
async function failedPartway(): Promise<string> {
  const { client, svc } = farm.e2e;
  const id = await renderingPartway(client, await buildFixture('basic'), '1-8', SLOW_SAMPLES);
  const blender = blenderProcesses(workDirOf(svc, id));
  expect(blender).toHaveLength(1);
  process.kill(blender[0]!.pid, 'SIGKILL');
  const failed = await client.waitForStatus(id, ['failed', 'completed'], { intervalMs: 100, timeoutMs: 60_000 });
  expect(failed.status).toBe('failed');
  expect(failed.failedReason?.name).toBe('RETRIES_EXHAUSTED');
  // The worker keeps the finished frames, then removes the job's folder.
  await waitUntil("the failed job's folder to go", () => !existsSync(workDirOf(svc, id)), { timeoutMs: 60_000 });
  return id;
}

suite('requeue in the dashboard (Chromium)', () => {
  it(
    'requeues a failed job from its page; the new job renders only the missing frames and completes, linked ' +
      'both ways',
    async () => {
      const { client, svc } = farm.e2e;
      const oldId = await failedPartway();
      const progressBefore = await client.getJobProgress(oldId);

      const { context, page, problems } = await signedInPage(farm.browser, svc.origin, svc.apiKey, {
        width: 1280,
        height: 900,
      });

      await page.goto(`${svc.origin}/#/jobs/${oldId}`);
      await page.waitForSelector('#job-status[data-status="failed"]');
      const requeueButton = page.getByRole('button', { name: 'Requeue' });
      await requeueButton.waitFor({ state: 'visible' });
      // A failed job offers Requeue, not the re-render form of a completed one.
      expect(await page.isHidden('#job-rerender')).toBe(true);
      await shot(page, 'failed-job');

      await requeueButton.click();
      await page.waitForFunction(
        (old) => /^#\/jobs\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.includes(old),
        oldId,
      );
      const newId = decodeURIComponent(new URL(page.url()).hash.slice('#/jobs/'.length));
      expect(newId).not.toBe(oldId);
      await page.waitForSelector(`#job-lineage .requeued-from a[data-job-id="${oldId}"]`);
      await page.waitForSelector('#job-status[data-status="completed"]', { timeout: 240_000 });
      // The page follows the new job live; once completed it shows the outputs of every frame.
      await page.waitForSelector('#outputs li');
      expect(await page.isHidden('#job-requeue')).toBe(true);
      expect(await page.isVisible('#job-rerender')).toBe(true);
      await shot(page, 'new-job-completed');

      // Only the frames the failed job had not finished were rendered; all 8 are in the outputs.
      const { body } = await api(svc.baseUrl, svc.apiKey)<{ data: JobTask[] }>('GET', `/jobs/${newId}/tasks`);
      const rendered = body.data
        .filter((t) => t.kind === 'render-chunk' && t.state === 'done')
        .flatMap((t) => t.frames ?? []);
      const copied = FRAMES.filter((f) => !rendered.includes(f));
      expect(copied.length).toBeGreaterThanOrEqual(progressBefore.framesDone ?? 2);
      expect(rendered.length).toBeGreaterThan(0);
      const downloads = await client.getDownloads(newId);
      expect((downloads.frameOutputs ?? []).map((o) => o.fileName).sort()).toEqual(
        FRAMES.map((f) => `f_${String(f).padStart(4, '0')}.png`),
      );
      const outputsShown = await page.$$eval('#outputs li a', (as) => as.map((a) => a.textContent ?? ''));
      for (const f of ['f_0001.png', 'f_0008.png']) expect(outputsShown).toContain(f);

      // Back on the failed job's page: "Requeued as" the new job.
      await page.click(`#job-lineage .requeued-from a[data-job-id="${oldId}"]`);
      await page.waitForSelector('#job-status[data-status="failed"]');
      await page.waitForSelector(`#job-lineage .requeued-as a[data-job-id="${newId}"]`);
      expect(await page.textContent('#job-lineage')).toContain(`Requeued as ${newId}`);
      await shot(page, 'failed-job-requeued-as');

      // Requeue again on the failed job: the same new job opens, nothing new is made.
      await requeueButton.click();
      await page.waitForFunction((id) => location.hash === `#/jobs/${id}`, newId);
      expect(
        (await client.listJobs({ pageSize: 100 })).jobs.filter((j) => j.status !== 'failed').map((j) => j.id),
      ).toEqual([newId]);

      // The completed job's page offers "Re-render frames…": a frame outside the job is refused on the
      // page, frame 3 makes a new job that renders only it.
      await page.waitForSelector('#job-status[data-status="completed"]');
      await page.getByLabel('Frames to render again').fill('9');
      await page.getByRole('button', { name: 'Re-render frames…' }).click();
      await page.waitForSelector('#requeue-error:not([hidden])');
      expect(await page.textContent('#requeue-error')).toContain('choose among 1-8');
      await shot(page, 'rerender-refused');
      await page.getByLabel('Frames to render again').fill('3');
      await page.getByRole('button', { name: 'Re-render frames…' }).click();
      await page.waitForFunction(
        (id) => /^#\/jobs\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.includes(id),
        newId,
      );
      const rerenderId = decodeURIComponent(new URL(page.url()).hash.slice('#/jobs/'.length));
      await page.waitForSelector(`#job-lineage .requeued-from a[data-job-id="${newId}"]`);
      expect(await page.textContent('#job-lineage')).toContain('(frames 3)');
      await page.waitForSelector('#job-status[data-status="completed"]', { timeout: 240_000 });
      await shot(page, 'rerender-completed');
      const tasks = await api(svc.baseUrl, svc.apiKey)<{ data: JobTask[] }>('GET', `/jobs/${rerenderId}/tasks`);
      expect(tasks.body.data.filter((t) => t.kind === 'render-chunk').flatMap((t) => t.frames ?? [])).toEqual([3]);
      expect(problems).toEqual([]);
      await context.close();
    },
    400_000,
  );
});
