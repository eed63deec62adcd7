// The add-on's Estimate button, then Render on farm, in real headless Blender on every build of the
// Blender matrix (3.4 as a legacy add-on, 4.3 and 5.2 as an extension in their Debian roots; the
// farm's worker has that build too, as a file saved by 5.2 does not open in 3.4) against a real
// daemon and a reference service with a worker (test/host-addon/drivers/estimate.py presses the
// buttons and pumps the add-on's timer tick): the panel shows time, cost and memory with their bands
// and the frames they rest on; the figures are plausible; Render on farm then renders the estimated
// job without packing or uploading again, and the sampled frames are not rendered twice (each has one
// frame-stats row, from before the estimate ended, and no render task of the job lists it).
// Cancel estimate, pressed while the farm's Blender renders the samples
// (drivers/estimate_cancel.py), ends the estimate ESTIMATE_CANCELED: the panel says so, the
// service's estimate is canceled, the job's Blender ends and the job stays validated.
import path from 'node:path';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EstimateEnvelope, type Estimate } from '../../shared/api/estimate.js';
import { FrameStatsPage } from '../../shared/api/frame-stats.js';
import { JobTaskList } from '../../shared/api/dashboard.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { blenderProcesses, waitUntil } from '../helpers/e2e.js';
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
interface CancelResult {
  connection_error: string | null;
  estimate_op: { result: string[]; error?: string };
  sampling: Activity;
  sampling_panel: string[];
  cancel_poll?: boolean;
  cancel_op?: { result: string[]; error?: string };
  canceling_message?: string;
  ended: Activity & { estimate: Estimate | null };
  panel: string[];
  estimated: boolean;
}

describe.each(usableBuilds('add-on Estimate end to end'))('add-on Estimate on Blender $minor', (build) => {
  let stack: AddonStack | undefined;
  beforeAll(async () => {
    stack = await startAddonStack('rb-addon-estimate-', build);
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

  it('Cancel estimate, pressed while the farm samples, ends it ESTIMATE_CANCELED and stops its Blender', async () => {
    const { work, home, zip, e2e } = stack!;
    const dir = path.join(work, 'cancel');
    const signals = path.join(work, 'cancel-signals');
    await mkdir(dir, { recursive: true });
    await mkdir(signals, { recursive: true });
    const file = path.join(dir, 'basic.blend');
    await copyFile(await buildFixture('basic'), file);
    const result = path.join(work, 'cancel.json');
    const driver = runDriver<CancelResult>({
      name: 'estimate_cancel',
      home,
      file,
      args: [zip, result, signals],
      result,
      timeoutMs: 600_000,
    });
    // The driver says which job it estimates; Cancel is pressed once that job's Blender renders on the farm.
    let driverEnded = false;
    void driver.then(
      () => (driverEnded = true),
      () => (driverEnded = true),
    );
    const jobId = await waitUntil(
      'the estimate to sample on the farm',
      async () => {
        // A driver that ended early (the estimate failed or ended first) says why when awaited below.
        if (driverEnded) return 'driver ended';
        const id = await readFile(path.join(signals, 'job'), 'utf8').catch(() => '');
        return id !== '' && blenderProcesses(id).length > 0 ? id : false;
      },
      { timeoutMs: 300_000 },
    );
    if (jobId === 'driver ended') {
      const early = await driver;
      expect.fail(`the driver ended before Cancel could be pressed: ${JSON.stringify(early.ended ?? early)}`);
    }
    await writeFile(path.join(signals, 'go'), 'cancel');
    const got = await driver;
    expect(got.connection_error).toBeNull();
    expect(got.estimate_op).toEqual({ result: ['FINISHED'] });
    expect(got.sampling).toMatchObject({ mode: 'estimate', step: 'estimating', jobId, finished: false });
    // While it samples the panel offers Cancel estimate, and the operator may run.
    expect(got.sampling_panel).toContain('<Cancel estimate>');
    expect(got.cancel_poll).toBe(true);
    expect(got.cancel_op).toEqual({ result: ['FINISHED'] });
    expect(got.canceling_message).toBe('Canceling the estimate...');

    // The estimate ended canceled, and the panel says so in words, without Cancel any more.
    expect(got.ended).toMatchObject({ mode: 'estimate', step: 'failed', jobId, finished: true });
    expect(got.ended.error).toMatch(/^ESTIMATE_CANCELED: .*the job stays validated/);
    expect(got.ended.estimate?.state).toBe('canceled');
    console.log(`the panel after Cancel estimate:\n${got.panel.join('\n')}`);
    expect(got.panel).toContain('Estimate: Canceled');
    expect(got.panel.filter((l) => l.startsWith('!')).join(' ')).toContain('ESTIMATE_CANCELED');
    expect(got.panel).not.toContain('<Cancel estimate>');
    expect(got.estimated).toBe(false);

    // The farm stopped: the service's estimate is canceled, the job's Blender ends, the job stays validated.
    const service = api(e2e.svc.baseUrl, e2e.svc.apiKey);
    const est = EstimateEnvelope.parse((await service('GET', `/jobs/${jobId}/estimate`)).body).data;
    expect(est.state).toBe('canceled');
    await waitUntil('the sampling Blender to end', () => blenderProcesses(jobId).length === 0, { timeoutMs: 60_000 });
    await waitUntil('no task of the job to run', async () => {
      const tasks = JobTaskList.parse((await service('GET', `/jobs/${jobId}/tasks`)).body).data;
      return tasks.every((t) => t.state !== 'running' && t.state !== 'queued');
    });
    expect((await e2e.client.getJob(jobId)).status).toBe('validated');
  }, 900_000);
});
