// The render takes over the estimate's Blender (real service, its one-slot worker, real Blender):
// after POST /jobs/{id}/estimate the Blender that rendered the samples stays in the slot's pool
// (estimateWarmKeepSeconds), and the render of the same request renders its frames in it: one
// Blender start and one scene load for estimate and render, every frame delivered once, the load
// billed to the render and taken off the estimate's own cost. A render
// with other settings loads the scene in a Blender of its own, and a cancel of the job ends a kept
// Blender at once, long before its keep time.
import { describe, expect, it } from 'vitest';
import { EstimateEnvelope, type Estimate } from '../../shared/api/estimate.js';
import { billedPieces, blenderProcesses, fetchBytes, tinyRender, useE2E, waitUntil } from '../helpers/e2e.js';

// The default keep time (120 s): a cancel that ends the kept Blender is seen well inside it.
const e2e = useE2E({ estimateRates: 'CPU=3.6' });

const readEstimate = async (id: string): Promise<Estimate> =>
  EstimateEnvelope.parse((await e2e.call('GET', `/jobs/${id}/estimate`)).body).data;

/** Estimates `frames` of a fresh validated job and waits for it to be ready; answers the job id. */
async function estimated(frames: string): Promise<string> {
  const id = await e2e.validated();
  expect((await e2e.call('POST', `/jobs/${id}/estimate`, tinyRender(frames))).status).toBe(202);
  const est = await waitUntil(
    'the estimate to end',
    async () => {
      const e = await readEstimate(id);
      return e.state !== 'sampling' && e;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );
  expect(est).toMatchObject({ state: 'ready', reason: null });
  return id;
}

/** The job's log lines with `msg`, parsed. */
function logged(id: string, msg: string): Record<string, unknown>[] {
  return e2e.svc.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.jobId === id);
}

async function renderToEnd(id: string, body: ReturnType<typeof tinyRender>): Promise<string[]> {
  await e2e.client.renderJob(id, body);
  const done = await e2e.client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 300_000 });
  expect(done.failedReason ?? null).toBeNull();
  const outputs = (await e2e.client.getDownloads(id)).frameOutputs ?? [];
  // Every output is a whole PNG.
  for (const o of outputs) expect((await fetchBytes(o.url)).subarray(1, 4).toString()).toBe('PNG');
  return outputs.map((f) => f.fileName).sort();
}

const NINE = Array.from({ length: 9 }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`);

describe("the render takes over the estimate's Blender", () => {
  it('renders its frames in the Blender that rendered the samples: one start and one scene load in all', async () => {
    const id = await estimated('1-9');
    const before = await readEstimate(id);
    const ownBefore = before.ownCost.renderSeconds;
    // Kept after the estimate, for the render.
    expect(blenderProcesses(id)).toHaveLength(1);
    // The one slot holds it: the wall time is the frames alone, no fetch, load or warm-up (the worker's
    // report may still show the estimate's task on the slot: free for the render all the same).
    const f = before.figures!;
    expect(f.loadSeconds!.value).toBeGreaterThan(0);
    expect(f.wallSeconds.value).toBeCloseTo(f.renderSeconds.value, 0);
    expect(before.warnings.some((w) => w.includes('counts no scene load'))).toBe(true);
    expect(await renderToEnd(id, tinyRender('1-9'))).toEqual(NINE);

    expect(logged(id, 'warm Blender started')).toHaveLength(1);
    expect(logged(id, 'warm Blender ready')).toHaveLength(1);
    const pieces = billedPieces(e2e.svc.logs, id);
    // One load, billed to the estimate, then handed over to the render with the Blender.
    const loads = pieces.filter((p) => p.piece === 'load');
    expect(loads).toHaveLength(2);
    expect(loads[1]).toMatchObject({ warm: loads[0]!.warm, ms: loads[0]!.ms });
    const ownAfter = (await readEstimate(id)).ownCost.renderSeconds;
    expect(ownBefore - ownAfter).toBeCloseTo(loads[0]!.ms / 1000, 0);
    expect(ownAfter).toBeLessThan(ownBefore);
    // The samples (1, 5, 9) were copied; the render's own frames came from that same Blender.
    const frames = pieces.filter((p) => p.frame !== undefined);
    expect(frames.map((p) => p.frame).sort((a, b) => a! - b!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(new Set(frames.map((p) => p.warm))).toEqual(new Set([loads[0]!.warm]));
    // It ends with the job.
    await waitUntil('its Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 60_000 });
  }, 600_000);

  it('a render with other settings loads the scene in a Blender of its own', async () => {
    const id = await estimated('1-9');
    expect(await renderToEnd(id, tinyRender('1-9', { sampleCount: 8 }))).toEqual(NINE);

    const started = logged(id, 'warm Blender started');
    expect(started).toHaveLength(2);
    const [estimateOne, renderOne] = started.map((l) => l.warm);
    const pieces = billedPieces(e2e.svc.logs, id);
    expect(pieces.filter((p) => p.piece === 'load').map((p) => p.warm)).toEqual([estimateOne, renderOne]);
    // Other settings: no sample was kept, every frame rendered again, none in the estimate's Blender.
    const renderFrames = pieces.filter((p) => p.frame !== undefined && p.warm !== estimateOne);
    expect(renderFrames.map((p) => p.frame).sort((a, b) => a! - b!)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(renderFrames.every((p) => p.warm === renderOne)).toBe(true);
    expect(logged(id, 'warm Blender ended').map((l) => l.reason)).toContain('its job needs other settings');
  }, 600_000);

  it('a cancel of the job ends the kept Blender at once', async () => {
    const id = await estimated('1-3');
    expect(blenderProcesses(id)).toHaveLength(1);
    const asked = Date.now();
    await e2e.client.cancelJob(id);
    // Far inside the 120 s keep time.
    await waitUntil('the kept Blender to end', () => blenderProcesses(id).length === 0, { timeoutMs: 20_000 });
    expect(Date.now() - asked).toBeLessThan(20_000);
    expect(logged(id, 'warm Blender ended').map((l) => l.reason)).toContain('its job was canceled');
  }, 300_000);
});
