// Out of memory with real Blender under a real memory cgroup: a worker whose CPU slot is held to
// 500 MiB (--slot-memory; its Blender runs in a cgroup of that size) renders a scene that needs
// about 1 GiB. Alone on the farm, the job fails with OUT_OF_MEMORY naming the peak and the largest
// slot; with a worker of more memory beside it, the frame the kernel killed is retried there and the
// job completes. Needs root and a writable memory cgroup (v1 or v2): outside CI it skips without.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import { FrameStatsPage } from '../../shared/api/frame-stats.js';
import { createSlotCgroup, ownMemoryCgroup } from '../../blender/memory-cgroup.js';
import type { StartedWorker } from '../../service/worker/start.js';
import { buildFixture } from '../helpers/fixtures.js';
import { api } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { submit, tinyRender, validationOutcome, waitUntil } from '../helpers/e2e.js';
import { namedWorker, startSideWorker } from '../helpers/side-worker.js';

const SMALL = 500 * 2 ** 20;

const withoutSlotMemory = <T extends { slotMemoryBytes?: number }>({ slotMemoryBytes: _s, ...rest }: T) => rest;

/** Why the test cannot run here (no cgroup to make), or undefined. */
function noCgroup(): string | undefined {
  const own = ownMemoryCgroup();
  if (!own) return 'this process has no memory cgroup (v1 memory controller or v2 memory.max)';
  try {
    createSlotCgroup(own, `renderbridge-probe-${process.pid}`, SMALL).remove();
    return undefined;
  } catch (err) {
    return `a memory cgroup cannot be made here (${(err as Error).message}): run as root`;
  }
}
const why = noCgroup();
if (why && process.env.CI) throw new Error(`the out-of-memory test needs a memory cgroup: ${why}`);
if (why) console.warn(`skipping the out-of-memory test: ${why}`);

// Both render modes: one Blender per frame (chunked), and a warm Blender per slot that loads the scene once.
describe.skipIf(why !== undefined).each(['chunked', 'warm'] as const)(
  'a frame that runs out of memory (%s)',
  (mode) => {
    let svc: TestService;
    let client: RenderJobClient;
    let big: StartedWorker | undefined;
    let heavy: string;

    beforeAll(async () => {
      // The service's own worker: one CPU slot of 500 MiB, one Blender per frame.
      svc = await startTestService({
        workers: 1,
        slotMemoryBytes: SMALL,
        renderMode: mode,
        chunkFrames: 1,
        worker: namedWorker('small'),
      });
      client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
      heavy = await buildFixture('heavy');
    }, 180_000);
    afterAll(async () => {
      await big?.stop();
      await svc?.close();
    });

    it('fails the job with OUT_OF_MEMORY when no live slot has more memory', async () => {
      const id = await submit(client, heavy);
      expect((await validationOutcome(client, id)).status).toBe('validated');
      await client.renderJob(id, tinyRender('1'));
      const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 180_000 });
      expect(done.status).toBe('failed');
      expect(done.failedReason).toMatchObject({
        name: 'OUT_OF_MEMORY',
        type: 'RENDER_FAILED',
        errorDetails: { frame: 1, slotMemoryBytes: SMALL, largestSlotBytes: SMALL, peakBytes: SMALL },
      });
      expect(String(done.failedReason?.errorDetails.message)).toMatch(
        /^Frame 1 ran out of memory: it was killed by the kernel at a peak of 500 MiB in a slot of 500 MiB, and the largest live slot on the farm has 500 MiB\. Render it on a worker with more memory/,
      );
      // The job's need, as placement reads it: more than the slot it died in.
      const rec = await svc.service.ports.jobs.getById(id);
      expect(rec?.internal.memory).toMatchObject({
        outOfMemoryAboveBytes: SMALL,
        lastOutOfMemory: { frame: 1, slot: 'small/cpu-0' },
      });
    }, 240_000);

    it('retries a frame the kernel killed on a worker with more memory, where the job completes', async () => {
      const ports = svc.service.ports;
      // A worker beside it with the machine's memory (no --slot-memory), in the registry before the render.
      big = await startSideWorker(svc, 'big', { ...withoutSlotMemory(svc.config), workers: 1 });
      const call = api(svc.baseUrl, svc.apiKey);
      await waitUntil('the big worker in the registry', async () => {
        const r = await call('GET', '/workers');
        return JSON.stringify(r.body).includes('"name":"big"');
      });
      const id = await submit(client, heavy);
      expect((await validationOutcome(client, id)).status).toBe('validated');
      // Two frames, one task each: both slots claim one, and the small one's is killed.
      await client.renderJob(id, tinyRender('1-2'));
      const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 240_000 });
      expect(done.failedReason ?? null).toBeNull();
      expect(done.status).toBe('completed');
      const { data } = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body);
      // Every frame that finished, finished on the big worker.
      expect(data.frames.map((f) => [f.frame, f.slot])).toEqual([
        [1, 'big/cpu-0'],
        [2, 'big/cpu-0'],
      ]);
      const rec = await ports.jobs.getById(id);
      expect(rec?.internal.memory?.lastOutOfMemory?.slot).toBe('small/cpu-0');
      expect(rec?.internal.memory?.peakBytes).toBeGreaterThan(SMALL);
    }, 300_000);
  },
);
