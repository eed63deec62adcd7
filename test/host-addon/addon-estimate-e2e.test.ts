// The add-on's Estimate button, then Render on farm, in real headless Blender (3.4, Debian's: one
// build, as the estimate runs real sample renders) against a real daemon and a reference service
// with a worker (test/host-addon/drivers/estimate.py presses the buttons and pumps the add-on's
// timer tick): the panel shows time, cost and memory with their bands and the frames they rest on;
// the figures are plausible; Render on farm then renders the estimated job without packing or
// uploading again, and the sampled frames are not rendered twice (each has one frame-stats row,
// from before the estimate ended, and no render task of the job lists it).
import path from 'node:path';
import { copyFile, mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Estimate } from '../../shared/api/estimate.js';
import { FrameStatsPage } from '../../shared/api/frame-stats.js';
import { JobTaskList } from '../../shared/api/dashboard.js';
import { testBuild } from '../helpers/blender-builds.js';
import { buildFixture } from '../helpers/fixtures.js';
import { api } from '../helpers/http.js';
import { runDriver, startAddonStack, type AddonStack } from './blender-addon.js';

interface Activity {
  mode: string;
  step: string;
  message: string;
  error: string | null;
  jobId: string | null;
  packId: string | null;
  outDir: string | null;
  finished: boolean;
}
interface EstimateResult {
  connection_error: string | null;
  estimate_op: { result: string[]; error?: string };
  estimate_steps: string[];
  cancel_poll?: boolean;
  estimate_activity: Activity;
  estimate: Estimate;
  estimated_job: string | null;
  panel: string[];
  render_op: { result: string[]; error?: string };
  render_activity: Activity;
  files: string[];
  estimated_after: boolean;
}

describe('add-on Estimate then Render on farm, Blender 3.4', () => {
  let stack: AddonStack | undefined;
  beforeAll(async () => {
    stack = await startAddonStack('rb-addon-estimate-', testBuild('3.4'));
  }, 180_000);
  afterAll(() => stack?.close());

  it('shows plausible figures on the panel, then renders the estimated job keeping the sampled frames', async () => {
    const { work, home, zip, e2e } = stack!;
    const dir = path.join(work, 'shot');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'basic.blend');
    await copyFile(await buildFixture('basic'), file);
    const result = path.join(work, 'estimate.json');
    const got = await runDriver<EstimateResult>({
      name: 'estimate',
      home,
      file,
      args: [zip, result, '1-6'],
      result,
      timeoutMs: 600_000,
    });
    expect(got.connection_error).toBeNull();
    expect(got.estimate_op).toEqual({ result: ['FINISHED'] });
    expect(got.estimate_activity).toMatchObject({ mode: 'estimate', step: 'done', error: null, finished: true });
    expect(got.estimate_steps).toContain('estimating');
    // Cancel estimate was offered while the farm sampled.
    expect(got.cancel_poll).toBe(true);

    // Plausible figures: the frames it rests on, a time above 0, each band holding its figure.
    const est = got.estimate;
    expect(est.state).toBe('ready');
    expect(est.sampleFrames.length).toBeGreaterThanOrEqual(3);
    expect(est.sampleFrames).toEqual(expect.arrayContaining([1, 6]));
    expect(est.framesTotal).toBe(6);
    const f = est.figures!;
    expect(f.framesToRender).toBe(6 - est.sampleFrames.length);
    expect(f.wallSeconds.value).toBeGreaterThan(0);
    expect(f.renderSeconds.value).toBeGreaterThan(0);
    for (const b of [f.wallSeconds, f.renderSeconds, f.peakMemoryBytes!]) {
      expect(b.frames).toBeGreaterThanOrEqual(3);
      expect(b.frames).toBeLessThanOrEqual(est.sampleFrames.length);
      expect(b.low).toBeLessThanOrEqual(b.value);
      expect(b.value).toBeLessThanOrEqual(b.high);
    }
    expect(f.peakMemoryBytes!.value).toBeGreaterThan(1e6);
    expect(got.estimated_job).toBe(got.estimate_activity.jobId);

    // The panel says it in words: time, cost, memory, what it rests on, and what Render does next.
    const panel = got.panel.join('\n');
    console.log(`the panel after Estimate:\n${panel}`);
    expect(panel).toContain('Estimate: Estimate ready: Render on farm renders this job, keeping the sampled frames.');
    expect(panel).toMatch(/Time on the farm now: \d.* \(.* to .*\) for \d+ frame\(s\) left/);
    expect(panel).toMatch(/Compute: .* on CPU/);
    expect(panel).toContain('Cost: no price is set on this farm');
    expect(panel).toMatch(/Memory: Peak memory about/);
    expect(panel).toContain(`Rests on ${f.wallSeconds.frames} sample(s) from frames ${est.sampleFrames.join(', ')}`);
    expect(got.panel).toContain('<Estimate>');

    // Render on farm renders the same job: nothing packed or uploaded again.
    expect(got.render_op).toEqual({ result: ['FINISHED'] });
    expect(got.render_activity).toMatchObject({ mode: 'render', step: 'done', error: null, packId: null });
    const jobId = got.render_activity.jobId!;
    expect(jobId).toBe(got.estimated_job);
    expect(got.estimated_after).toBe(false);
    const pngs = got.files.filter((n) => n.endsWith('.png'));
    for (let frame = 1; frame <= 6; frame++)
      expect(
        pngs.some((n) => n.includes(`000${frame}`)),
        `frame ${frame}`,
      ).toBe(true);

    // The sampled frames were rendered once, for the estimate: one row each, finished before the
    // estimate was; no render task of the job lists them.
    const service = api(e2e.svc.baseUrl, e2e.svc.apiKey);
    const rows = FrameStatsPage.parse((await service('GET', `/jobs/${jobId}/frames`)).body).data.frames;
    expect([...new Set(rows.map((r) => r.frame))].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    const estimateEnd = Date.parse(est.finishedAt!);
    for (const frame of est.sampleFrames) {
      const mine = rows.filter((r) => r.frame === frame);
      expect(mine, `frame ${frame}`).toHaveLength(1);
      expect(Date.parse(mine[0]!.finishedAt)).toBeLessThanOrEqual(estimateEnd);
    }
    for (const r of rows.filter((x) => !est.sampleFrames.includes(x.frame)))
      expect(Date.parse(r.finishedAt)).toBeGreaterThan(estimateEnd);
    const tasks = JobTaskList.parse((await service('GET', `/jobs/${jobId}/tasks`)).body).data;
    const rendered = tasks.filter((t) => t.kind === 'render-chunk').flatMap((t) => t.frames ?? []);
    expect(rendered.filter((fr) => est.sampleFrames.includes(fr))).toEqual([]);
  }, 900_000);
});
