// A chunk's frames are on the disk before the queue records the chunk done, with real Blender in
// warm and chunked mode. Once a task is done nothing renders its frames again, so a power loss
// after that must not take them (a power-loss run with previews first once failed FRAMES_MISSING
// that way). A power cut cannot be run on the test machines; what it would take can be seen: the
// pages of a file that the kernel has not written back yet (cachestat(2), Linux 6.5: dirty or under
// writeback). Each chunk task is looked at as its worker tells the queue it is done: every file of
// its frames is in out/ with no page left to write. Previews first (the default): the single-frame
// preview chunks are the ones done early, long before the kernel's own write-back.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/fixtures.js';
import { cannotCheckPages, unwrittenPages } from '../helpers/page-cache.js';
import { startE2E, submit, tinyRender, validationOutcome, workDirOf, type E2E } from '../helpers/e2e.js';

/** Why the check cannot run here, or undefined (test/helpers/page-cache.ts). */
const cannotCheck = (dir: string) => cannotCheckPages(dir, path.join(import.meta.dirname, 'frames-durable.test.ts'));

const frameFile = (n: number) => `f_${String(n).padStart(4, '0')}.png`;

describe('frames are durable before their chunk is done', () => {
  const farms: E2E[] = [];
  afterAll(async () => {
    for (const f of farms) await f.svc.close();
  });

  it.each(['warm', 'chunked'] as const)(
    '%s mode: every done chunk has its frames on the disk',
    async (mode) => {
      const e2e = await startE2E({ renderMode: mode });
      farms.push(e2e);
      const why = await cannotCheck(e2e.svc.config.dataDir);
      if (why) {
        console.log(`skipped: ${why}`);
        return;
      }
      const id = await submit(e2e.client, await buildFixture('basic'));
      expect((await validationOutcome(e2e.client, id)).status).toBe('validated');
      await e2e.client.renderJob(id, tinyRender('1-12'));
      const frames = path.join(workDirOf(e2e.svc, id), 'out', 'frames');
      const seen = new Map<string, { frames: number[]; unwritten: number[] }>();
      // Looked at on the worker's way to the queue, just before the real complete: no later, when
      // finalize may have removed the work folder already. It only observes, then hands on.
      const queue = e2e.svc.service.ports.queue;
      const complete = queue.complete.bind(queue);
      queue.complete = async (taskId, workerId) => {
        const t = (await queue.jobTaskRuns(id)).find((r) => r.id === taskId);
        if (t?.kind === 'render-chunk') {
          const own = t.frames ?? [];
          seen.set(taskId, {
            frames: own,
            unwritten: await unwrittenPages(own.map((f) => path.join(frames, frameFile(f)))),
          });
        }
        return complete(taskId, workerId);
      };
      const ended = await e2e.client.waitForStatus(id, ['completed', 'failed', 'canceled'], {
        intervalMs: 200,
        timeoutMs: 180_000,
      });
      expect(ended.failedReason ?? null).toBeNull();
      expect([...seen.values()].flatMap((s) => s.frames).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
      // Each done chunk's frame files: written to the disk, none left in the page cache to write.
      for (const [task, s] of seen) expect(s.unwritten, task).toEqual(s.frames.map(() => 0));
    },
    240_000,
  );
});
