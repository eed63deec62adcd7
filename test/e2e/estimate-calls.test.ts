// The estimate's render calls on every build of the matrix (real service, its one-slot worker, real
// Blender, a scene that build saved): the spread samples of a long job go to Blender as one call with
// a frame step behind one run-up (the frame loop is each build's own Python: render_loop.py), and across
// an animated property's steps on Cycles each sample goes behind a run-up of its own
// (service/domain/estimate-samples.ts: firstCalls). The calls are read from the estimate's task log.
import { describe, expect, it } from 'vitest';
import { EstimateEnvelope, type Estimate } from '../../shared/api/estimate.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { submit, tinyRender, useE2E, validationOutcome, waitUntil, type E2ESuite } from '../helpers/e2e.js';
import { buildFixture, type FixtureName } from '../helpers/fixtures.js';

/** The estimate once it has ended (ready, failed or canceled). */
async function ended(e2e: E2ESuite, id: string): Promise<Estimate> {
  return waitUntil(
    'the estimate to end',
    async () => {
      const e = EstimateEnvelope.parse((await e2e.call('GET', `/jobs/${id}/estimate`)).body).data;
      return e.state !== 'sampling' && e;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );
}

/** The render calls of the job's estimate as its closed task log names them: [start, end, step] each. */
async function renderCalls(e2e: E2ESuite, id: string): Promise<number[][]> {
  await waitUntil('the estimate task log to close', async () => {
    const index = await e2e.client.jobLogIndex(id);
    return index.tasks.length > 0 && index.tasks.every((t) => t.attempts.every((a) => !a.live)) ? true : undefined;
  });
  let text = '';
  for await (const part of e2e.client.jobLogs(id, {})) text += part;
  return [...text.matchAll(/render call (\d+)-(\d+) step (\d+) in warm Blender/g)].map((m) =>
    m.slice(1, 4).map(Number),
  );
}

describe.each(usableBuilds("the estimate's render calls").map((b) => [b.minor, b] as const))(
  "the estimate's render calls on Blender %s",
  (_minor, build) => {
    const e2e = useE2E({ estimateRates: 'CPU=3.6', blenderPaths: [build.path], blenderFromPath: false });

    it('renders the spread samples of a long job in one render call behind one run-up', async () => {
      const id = await submit(e2e.client, await buildFixture('basic', { blender: build.path, timeoutMs: 180_000 }));
      expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
      await e2e.call('POST', `/jobs/${id}/estimate`, tinyRender('1-40'));
      const est = await ended(e2e, id);
      expect(est.state).toBe('ready');
      const calls = await renderCalls(e2e, id);
      // The lead, then every spread sample in one stepped call: the run-up (frame 4), then 13, 22, 31, 40.
      // (Before, each sample went behind its run-up in a call of its own: five calls, each paying a setup.)
      expect(calls.slice(0, 2)).toEqual([
        [1, 3, 1],
        [4, 40, 9],
      ]);
      // Whatever refinement adds is one call a refined sample (behind its run-up), measured beside them.
      const refined = est.sampleFrames.filter((f) => ![1, 2, 3, 4, 13, 22, 31, 40].includes(f));
      expect(calls.length - 2).toBeLessThanOrEqual(refined.length);
      expect(est.sampleFrames).toEqual(expect.arrayContaining([1, 2, 3, 4, 13, 22, 31, 40]));
      const f = est.figures!;
      expect(f.renderSeconds.frames).toBeGreaterThanOrEqual(5);
      expect(f.loadSeconds!.frames).toBe(1);
    }, 300_000);

    it("puts each spread sample behind its own run-up across an animated property's steps on Cycles", async () => {
      // Subdivision levels keyed 0/1/2/3 at frames 1/15/41/67 (bench:estimate's EEVEE steps): a
      // stepped call (4, 28, 52, 76, 100) would enter each level straight from another, its first frame
      // there paying the change; a call setup costs Cycles little, so each sample gets a run-up.
      const keys = '1:0,15:1,41:2,67:3,99:3';
      const blendFile = await buildFixture('stepped-levels' as FixtureName, {
        args: [keys],
        blender: build.path,
        timeoutMs: 180_000,
      });
      const id = await submit(e2e.client, blendFile);
      expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
      await e2e.call('POST', `/jobs/${id}/estimate`, tinyRender('1-100'));
      const est = await ended(e2e, id);
      expect(est.state).toBe('ready');
      const calls = await renderCalls(e2e, id);
      expect(calls[0]).toEqual([1, 3, 1]);
      expect(calls.length).toBeGreaterThan(2);
      // Each later call is a run-up and its sample, one after the other: none steps over frames.
      for (const [start, end, step] of calls.slice(1)) expect([step, end! - start!]).toEqual([1, 1]);
      // Every level after the lead's has a sample: 15-40, 41-66, 67-100.
      for (const [a, b] of [
        [15, 40],
        [41, 66],
        [67, 100],
      ]) {
        expect(est.sampleFrames.some((f) => f >= a! && f <= b!)).toBe(true);
      }
    }, 300_000);
  },
);
