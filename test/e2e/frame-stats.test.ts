// Frame statistics of real renders in chunked mode (one Blender process per task; the warm mode
// is covered by the dashboard's frame chart test), on every Blender build of the matrix: each
// frame gets one row with its time, the RAM peak Blender printed (the 5.x logger's `Mem:` field
// included), the CPU, the slot and the build that rendered it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameStatsPage, JobProgressWithEtaEnvelope } from '../../shared/api/frame-stats.js';
import { RenderJobClient } from '../../shared/client/client.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import { startE2E, tinyRender, validationOutcome, submit } from '../helpers/e2e.js';
import { buildFixture } from '../helpers/fixtures.js';
import { api } from '../helpers/http.js';
import type { TestService } from '../helpers/service.js';

describe.each(usableBuilds('the frame statistics test').map((b) => [b.minor, b] as const))(
  'frame statistics in chunked mode on Blender %s',
  (minor, build) => {
    let svc: TestService;
    let client: RenderJobClient;
    beforeAll(async () => {
      ({ svc, client } = await startE2E({
        renderMode: 'chunked',
        blenderPaths: [build.path],
        blenderFromPath: false,
      }));
    }, 120_000);
    afterAll(async () => {
      await svc?.close();
    });

    it('records one row per rendered frame with its time, RAM peak, device, slot and build', async () => {
      const id = await submit(client, await buildFixture('basic', { blender: build.path }));
      expect((await validationOutcome(client, id)).status).toBe('validated');
      await client.renderJob(id, tinyRender('1-3'));
      expect(
        (await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 300_000 })).status,
      ).toBe('completed');
      const call = api(svc.baseUrl, svc.apiKey);
      const { data } = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body);
      expect(data.frames.map((f) => [f.frame, f.attempt, f.device])).toEqual([
        [1, 1, 'CPU'],
        [2, 1, 'CPU'],
        [3, 1, 'CPU'],
      ]);
      for (const f of data.frames) {
        expect(f.renderSeconds).toBeGreaterThan(0);
        expect(f.peakMemoryBytes).toBeGreaterThan(0);
        expect(f.slot).toMatch(/\/cpu-\d+$/);
        expect(f.blenderVersion?.startsWith(`${minor}.`)).toBe(true);
      }
      expect(data.summary).toMatchObject({ framesDone: 3 });
      // The job ended: no ETA.
      expect(data.eta).toBeNull();
      expect(
        JobProgressWithEtaEnvelope.parse((await call('GET', `/jobs/${id}/progress`)).body).data.etaBand,
      ).toBeNull();
    }, 300_000);
  },
);
