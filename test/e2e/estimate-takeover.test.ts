// The render takes over the estimate's Blender (real service, its one-slot worker, real Blender):
// after POST /jobs/{id}/estimate the Blender that rendered the samples stays in the slot's pool
// (estimateWarmKeepSeconds), and the render of the same request renders its frames in it: one
// Blender start and one scene load for estimate and render, every frame delivered once as a whole
// image, the load and the warm-up billed to the render and taken off the estimate's own cost, the two
// bills together unchanged. On every build of
// the matrix (a farm of that build alone, rendering a scene that build saved): the hand-over is
// the worker's, but the keep and the frame loop run in each build's own Python. A render with
// other settings loads the scene in a Blender of its own, and a cancel of the job ends a kept
// Blender at once, long before its keep time (the system build: neither depends on the build).
import { describe, expect, it } from 'vitest';
import { EstimateEnvelope, type Estimate } from '../../shared/api/estimate.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import {
  billedPieces,
  blenderProcesses,
  fetchBytes,
  submit,
  tinyRender,
  useE2E,
  validationOutcome,
  waitUntil,
  type E2ESuite,
} from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { pngDistinctBytes, pngInfo } from '../helpers/png.js';

// The default keep time (120 s): a cancel that ends the kept Blender is seen well inside it.
const OPTIONS = { estimateRates: 'CPU=3.6' };

const readEstimate = async (e2e: E2ESuite, id: string): Promise<Estimate> =>
  EstimateEnvelope.parse((await e2e.call('GET', `/jobs/${id}/estimate`)).body).data;

/** Estimates `frames` of the validated job `id` and waits for it to be ready. */
async function estimate(e2e: E2ESuite, id: string, frames: string): Promise<void> {
  expect((await e2e.call('POST', `/jobs/${id}/estimate`, tinyRender(frames))).status).toBe(202);
  const est = await waitUntil(
    'the estimate to end',
    async () => {
      const e = await readEstimate(e2e, id);
      return e.state !== 'sampling' && e;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );
  expect(est).toMatchObject({ state: 'ready', reason: null });
}

/** Estimates `frames` of a fresh validated job of the basic fixture; answers the job id. */
async function estimated(e2e: E2ESuite, frames: string): Promise<string> {
  const id = await e2e.validated();
  await estimate(e2e, id, frames);
  return id;
}

/** The job's log lines with `msg`, parsed. */
function logged(e2e: E2ESuite, id: string, msg: string): Record<string, unknown>[] {
  return e2e.svc.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.jobId === id);
}

/** Renders the job to its end; answers its frames' file names, each checked to be a whole, not flat, 64x48 PNG. */
async function renderToEnd(e2e: E2ESuite, id: string, body: ReturnType<typeof tinyRender>): Promise<string[]> {
  await e2e.client.renderJob(id, body);
  const done = await e2e.client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 300_000 });
  expect(done.failedReason ?? null).toBeNull();
  expect(done.status).toBe('completed');
  const outputs = (await e2e.client.getDownloads(id)).frameOutputs ?? [];
  for (const o of outputs) {
    const png = await fetchBytes(o.url);
    expect(pngInfo(png), o.fileName).toMatchObject({ width: 64, height: 48 });
    expect(png.subarray(png.length - 8, png.length - 4).toString('latin1'), o.fileName).toBe('IEND');
    expect(pngDistinctBytes(png), o.fileName).toBeGreaterThan(2);
  }
  return outputs.map((f) => f.fileName).sort();
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`);

describe.each(usableBuilds("the render's takeover of the estimate's Blender").map((b) => [b.minor, b] as const))(
  "the render takes over the estimate's Blender on Blender %s",
  (minor, build) => {
    const e2e = useE2E({ ...OPTIONS, blenderPaths: [build.path], blenderFromPath: false });

    it('renders its frames in the Blender that rendered the samples: one start and one scene load in all', async () => {
      const id = await submit(e2e.client, await buildFixture('basic', { blender: build.path, timeoutMs: 180_000 }));
      expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
      // Long enough for a lead (frames 1-3, cold: estimate-samples.ts): its warm-up is measured and handed over.
      await estimate(e2e, id, '1-12');
      const before = await readEstimate(e2e, id);
      const ownBefore = before.ownCost.renderSeconds;
      // Kept after the estimate, for the render.
      expect(blenderProcesses(id)).toHaveLength(1);
      // The one slot holds it: the wall time is the frames alone, no fetch, load or warm-up (the worker's
      // report may still show the estimate's task on the slot: free for the render all the same).
      const f = before.figures!;
      expect(f.loadSeconds!.value).toBeGreaterThan(0);
      expect(f.wallSeconds.value).toBeCloseTo(f.renderSeconds.value, 0);
      expect(before.warnings.some((w) => w.includes('counts no scene load'))).toBe(true);
      expect(await renderToEnd(e2e, id, tinyRender('1-12'))).toEqual(names(12));
      const job = await e2e.client.getJob(id);
      expect(job.finalConfig?.hostVersionForRender).toMatch(new RegExp(`^${minor.replace('.', '\\.')}\\.`));

      expect(logged(e2e, id, 'warm Blender started')).toHaveLength(1);
      expect(logged(e2e, id, 'warm Blender ready')).toHaveLength(1);
      const pieces = billedPieces(e2e.svc.logs, id);
      // One load, billed to the estimate, then handed over to the render with the Blender.
      const loads = pieces.filter((p) => p.piece === 'load');
      expect(loads).toHaveLength(2);
      expect(loads[1]).toMatchObject({ warm: loads[0]!.warm, ms: loads[0]!.ms });
      // The lead's cold frames' excess over the warm third, billed to the render with the load, once.
      const warmups = pieces.filter((p) => p.piece === 'warmup');
      expect(warmups).toHaveLength(1);
      expect(warmups[0]!.warm).toBe(loads[0]!.warm);
      expect(warmups[0]!.ms).toBeGreaterThan(0);
      const lead = [1, 2, 3].map((n) => pieces.find((p) => p.frame === n)!.ms);
      // Never more than the lead took (its rows' times and the billed pieces' differ by milliseconds).
      expect(warmups[0]!.ms).toBeLessThanOrEqual(lead[0]! + lead[1]! + lead[2]!);
      const after = await readEstimate(e2e, id);
      const ownAfter = after.ownCost.renderSeconds;
      const moved = (loads[0]!.ms + warmups[0]!.ms) / 1000;
      // ownCost is kept to 0.1 s: before and after each round by 0.05 s at most.
      expect(Math.abs(ownBefore - ownAfter - moved)).toBeLessThanOrEqual(0.11);
      expect(ownAfter).toBeLessThan(ownBefore);
      // The job's bill grew by what the estimate let go of: its own frames, the load and the warm-up (CPU: 1x).
      const frames = pieces.filter((p) => p.frame !== undefined);
      const sampled = new Set(before.sampleFrames);
      const rendered = frames.filter((p) => !sampled.has(p.frame!)).reduce((s, p) => s + p.ms, 0) / 1000;
      expect(job.normalizedSeconds).toBeDefined();
      expect(Math.abs(job.normalizedSeconds! - (rendered + moved))).toBeLessThanOrEqual(0.11);
      // Estimate and job together billed what they had billed without the handover.
      const total = after.ownCost.normalizedSeconds + job.normalizedSeconds!;
      expect(Math.abs(total - (before.ownCost.normalizedSeconds + rendered))).toBeLessThanOrEqual(0.21);
      // The samples were copied; the render's own frames came from that same Blender.
      expect(frames.map((p) => p.frame).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(new Set(frames.map((p) => p.warm))).toEqual(new Set([loads[0]!.warm]));
      // It ends with the job.
      await waitUntil('its Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 60_000 });
    }, 600_000);
  },
);

describe("the estimate's kept Blender, other settings and a cancel", () => {
  const e2e = useE2E(OPTIONS);

  it('a render with other settings loads the scene in a Blender of its own', async () => {
    // Long enough for a lead: its warm-up is measured, and stays the estimate's.
    const id = await estimated(e2e, '1-12');
    const ownBefore = (await readEstimate(e2e, id)).ownCost;
    expect(await renderToEnd(e2e, id, tinyRender('1-12', { sampleCount: 8 }))).toEqual(names(12));

    const started = logged(e2e, id, 'warm Blender started');
    expect(started).toHaveLength(2);
    const [estimateOne, renderOne] = started.map((l) => l.warm);
    const pieces = billedPieces(e2e.svc.logs, id);
    expect(pieces.filter((p) => p.piece === 'load').map((p) => p.warm)).toEqual([estimateOne, renderOne]);
    // Other settings: no sample was kept, every frame rendered again, none in the estimate's Blender.
    const renderFrames = pieces.filter((p) => p.frame !== undefined && p.warm !== estimateOne);
    expect(renderFrames.map((p) => p.frame).sort((a, b) => a! - b!)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    expect(renderFrames.every((p) => p.warm === renderOne)).toBe(true);
    // Nothing taken over: no load or warm-up moved off the estimate's own cost.
    expect(pieces.filter((p) => p.piece === 'warmup')).toEqual([]);
    expect((await readEstimate(e2e, id)).ownCost).toEqual(ownBefore);
    expect(logged(e2e, id, 'warm Blender ended').map((l) => l.reason)).toContain('its job needs other settings');
  }, 600_000);

  it('a cancel of the job ends the kept Blender at once', async () => {
    const id = await estimated(e2e, '1-3');
    expect(blenderProcesses(id)).toHaveLength(1);
    const asked = Date.now();
    await e2e.client.cancelJob(id);
    // Far inside the 120 s keep time.
    await waitUntil('the kept Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 20_000 });
    expect(Date.now() - asked).toBeLessThan(20_000);
    expect(logged(e2e, id, 'warm Blender ended').map((l) => l.reason)).toContain('its job was canceled');
  }, 300_000);
});
