// Watching a render and surviving a service restart, through the public API with real Blender:
// the progress endpoints move while frames render, and a render interrupted by stopping the
// service completes after a new service starts on the same data folder, no frame lost or doubled
// (the new worker begins only the frames not finished before).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobProgress } from '../../shared/api/progress.js';
import { buildFixture } from '../helpers/fixtures.js';
import {
  blenderProcesses,
  framesBegun,
  startE2E,
  stoppedPartway,
  submit,
  tinyRender,
  validationOutcome,
  waitUntil,
  type E2E,
} from '../helpers/e2e.js';

const FRAMES = Array.from({ length: 12 }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`);

describe('progress while rendering', () => {
  let e2e: E2E;
  beforeAll(async () => {
    e2e = await startE2E();
  }, 120_000);
  afterAll(async () => {
    await e2e?.svc.close();
  });

  it('GET /jobs/{id}/progress and GET /jobs/progress show frames finishing', async () => {
    const { client } = e2e;
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    // In frame order (no previews first), so the frame in flight is always past the frames done.
    await client.renderJob(id, { ...tinyRender('1-12', { sampleCount: 256 }), scheduling: { previewFrames: false } });

    const one: JobProgress[] = [];
    const listed: JobProgress[] = [];
    await waitUntil(
      'the render to complete',
      async () => {
        const [p, all, job] = await Promise.all([client.getJobProgress(id), client.listProgress(), client.getJob(id)]);
        one.push(p);
        const mine = all.find((x) => x.jobId === id);
        if (mine) listed.push(mine);
        if (job.status === 'failed' || job.status === 'canceled') throw new Error(`the render ended ${job.status}`);
        return job.status === 'completed';
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );

    const rendering = one.filter((p) => p.status === 'rendering' && p.framesDone !== null);
    expect(rendering.length).toBeGreaterThan(1);
    for (const p of rendering) {
      expect(p.framesTotal).toBe(12);
      expect(p.framesDone).toBeGreaterThanOrEqual(0);
      expect(p.framesDone).toBeLessThanOrEqual(12);
      expect(p.percent).toBeGreaterThanOrEqual(0);
      expect(p.percent).toBeLessThanOrEqual(100);
    }
    // Frames finish one after the other: the counter only grows, and it was seen mid-way.
    const done = rendering.map((p) => p.framesDone!);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(new Set(done).size).toBeGreaterThan(1);
    expect(rendering.some((p) => p.framesDone! > 0 && p.framesDone! < 12 && p.percent! > 0 && p.percent! < 100)).toBe(
      true,
    );
    // Mid-way, the frame in flight is named, and it is one not done yet.
    const midway = rendering.filter((p) => p.framesDone! > 0 && p.framesDone! < 12 && p.framesRendering === 1);
    expect(midway.length).toBeGreaterThan(0);
    for (const p of midway) expect(p.currentFrame).toBeGreaterThan(p.framesDone!);

    // The workspace list carries the same job while it runs, and drops it once completed.
    expect(listed.some((p) => p.status === 'rendering' && p.framesTotal === 12 && (p.framesDone ?? 0) > 0)).toBe(true);
    expect((await client.listProgress()).find((p) => p.jobId === id)).toBeUndefined();
    expect(await client.getJobProgress(id)).toMatchObject({
      status: 'completed',
      framesTotal: 12,
      framesDone: 12,
      percent: 100,
    });
  }, 240_000);
});

describe('service restart mid-render', () => {
  let dataDir: string;
  const services: E2E[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'rb-e2e-restart-'));
  });
  afterAll(async () => {
    for (const s of services) await s.svc.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('completes on the next start with every frame exactly once', async () => {
    const first = await startE2E({ dataDir });
    services.push(first);
    const { id, workDir, finished: before } = await stoppedPartway(first, await buildFixture('basic'), 3);
    // Stopping the service takes its Blender with it.
    expect(blenderProcesses(workDir)).toEqual([]);
    // What was finished before the stop: the frames in the job's out/ folder.
    const finished = new Set(before);
    expect(finished.size).toBeGreaterThanOrEqual(3);

    const second = await startE2E({ dataDir });
    services.push(second);
    expect(second.svc.workspaceId).toBe(first.svc.workspaceId);
    await waitUntil('Blender to start again', () => blenderProcesses(workDir)[0], {
      timeoutMs: 60_000,
      intervalMs: 25,
    });

    const done = await second.client.waitForStatus(id, ['completed'], { intervalMs: 200, timeoutMs: 120_000 });
    expect(done.failedReason ?? null).toBeNull();
    const names = ((await second.client.getDownloads(id)).frameOutputs ?? []).map((f) => f.fileName);
    expect(names).toHaveLength(12);
    expect([...names].sort()).toEqual(FRAMES);
    expect(await second.client.getJobProgress(id)).toMatchObject({ framesTotal: 12, framesDone: 12, percent: 100 });
    // The new worker rendered only the frames not finished before, each once.
    const begun = framesBegun(second.svc.logs, id);
    expect([...begun.keys()].filter((f) => finished.has(f))).toEqual([]);
    expect([...begun.keys(), ...finished].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect([...begun.values()].every((n) => n === 1)).toBe(true);
  }, 240_000);
});
