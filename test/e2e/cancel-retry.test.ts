// A render that goes wrong or is stopped, through the public API with real Blender: the warm
// Blender killed mid-job (the job still completes, every frame once, only the frame in progress
// is begun again) and a cancel mid-render (Blender gone at once, nothing published, files removed).
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/fixtures.js';
import {
  blenderProcesses,
  filesUnder,
  frameArgs,
  framesBegun,
  startE2E,
  submit,
  tinyRender,
  validationOutcome,
  waitUntil,
  workDirOf,
  type E2E,
  type ProcInfo,
} from '../helpers/e2e.js';

/** Samples per frame making a 64x48 frame take about half a second here: a 12-frame chunk lasts seconds. */
const SLOW_SAMPLES = 384;
const FRAMES = Array.from({ length: 12 }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`);

let e2e: E2E;

beforeAll(async () => {
  e2e = await startE2E({ worker: { runtime: { retryBaseMs: 100 } } });
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
});

/** A validated basic job rendering frames 1-12 slowly, once at least `framesDone` frames are done. */
async function slowRender(framesDone: number): Promise<{ id: string; blender: ProcInfo }> {
  const { client, svc } = e2e;
  const id = await submit(client, await buildFixture('basic'));
  expect((await validationOutcome(client, id)).status).toBe('validated');
  await client.renderJob(id, tinyRender('1-12', { sampleCount: SLOW_SAMPLES }));
  await waitUntil(
    `${framesDone} frames done`,
    async () => {
      const p = await client.getJobProgress(id);
      if (p.status === 'completed' || p.status === 'failed')
        throw new Error(`the render ended (${p.status}) before it could be interrupted`);
      return (p.framesDone ?? 0) >= framesDone;
    },
    { timeoutMs: 90_000, intervalMs: 50 },
  );
  const procs = blenderProcesses(workDirOf(svc, id));
  expect(procs).toHaveLength(1);
  return { id, blender: procs[0]! };
}

describe('a warm Blender dies mid-job', () => {
  it('only the frame in progress is begun again; the job completes with every frame once', async () => {
    const { client, svc } = e2e;
    const { id, blender } = await slowRender(2);
    // One process renders the job frame by frame: the render loop, no frame range on its command line.
    expect(blender.argv.some((a) => a.endsWith('render_loop.py'))).toBe(true);
    expect(frameArgs(blender.argv)).toBeUndefined();
    process.kill(blender.pid, 'SIGKILL');

    // The next frames go to a new warm Blender for the same job.
    await waitUntil(
      'a new warm Blender',
      () => blenderProcesses(workDirOf(svc, id)).find((p) => p.pid !== blender.pid),
      { timeoutMs: 60_000, intervalMs: 25 },
    );

    const done = await client.waitForStatus(id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
    expect(done.failedReason ?? null).toBeNull();
    const names = ((await client.getDownloads(id)).frameOutputs ?? []).map((f) => f.fileName);
    expect(names).toHaveLength(12);
    expect(new Set(names).size).toBe(12);
    expect([...names].sort()).toEqual(FRAMES);
    const progress = await client.getJobProgress(id);
    expect(progress).toMatchObject({ status: 'completed', framesTotal: 12, framesDone: 12, percent: 100 });
    // Every frame was begun, and only the one Blender was rendering when it died was begun twice
    // (none when the kill fell between two frames).
    const begun = framesBegun(svc.logs, id);
    expect([...begun.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect([...begun.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
    expect(Math.max(...begun.values())).toBeLessThanOrEqual(2);
  }, 240_000);
});

describe('cancel mid-render', () => {
  it('stops Blender at once, publishes nothing and removes the job files', async () => {
    const { client, svc } = e2e;
    const { id } = await slowRender(1);
    const workDir = workDirOf(svc, id);
    // Finished frames are on disk at this point: none of them may reach the client.
    expect((await filesUnder(workDir)).some((f) => f.endsWith('.png'))).toBe(true);

    const canceled = await client.cancelJob(id);
    expect(canceled.status).toBe('canceled');
    const t0 = Date.now();
    await waitUntil('Blender to exit', () => blenderProcesses(workDir).length === 0, {
      timeoutMs: 30_000,
      intervalMs: 25,
    });
    const exitMs = Date.now() - t0;
    // At once: SIGTERM at the cancel, not the SIGKILL that follows a 5 s grace (room for a busy CI machine).
    expect(exitMs).toBeLessThan(4_000);

    await waitUntil('the work folder to go', () => !existsSync(workDir), { timeoutMs: 10_000 });
    const job = await client.getJob(id);
    expect(job.status).toBe('canceled');
    expect(job.previewUrl ?? null).toBeNull();
    const downloads = await client.getDownloads(id);
    expect(downloads).toMatchObject({ frames: [], compositeNodes: [], frameOutputs: [], compositeNodeOutputs: [] });
    expect(downloads.transforms?.framesZip ?? null).toBeNull();
    // Nothing of the job was stored as output either (uploads are stored by their own key): its
    // finished frames are only kept, unpublished, for a requeue (docs/reference/api-extensions.md, "job requeue"),
    // and its task logs stay with its record (docs/reference/api-extensions.md, "Extension: task logs"),
    // as do the thumbnails of the frames it finished, for the job page ("Extension: frame thumbnails").
    const stored = (await filesUnder(svc.dataDir)).filter((f) => f.includes(id) && !f.startsWith('objects/logs/'));
    expect(stored.filter((f) => !f.includes(`/${id}/kept/frames/`) && !f.includes(`/${id}/thumbnails/`))).toEqual([]);
    expect(stored.length).toBeGreaterThan(0);
    // And no Blender came back for it (no retry of a canceled job). The barrier: the worker has
    // settled the canceled task (its log says so), so a retry would have been queued by now.
    await waitUntil(
      'the worker to settle the canceled task',
      () => svc.logs.some((l) => l.includes(id) && l.includes('"task stopped"')),
      { timeoutMs: 30_000 },
    );
    expect(blenderProcesses(workDir)).toEqual([]);
  }, 240_000);
});
