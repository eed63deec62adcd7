// Two render slots sharing one job's frames, through the public API with real Blender: each slot
// loads the scene once (one warm Blender per slot), the frames are claimed one by one so both
// slots finish within about a frame of each other, every frame is delivered once, and the warm
// Blenders end with the job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/fixtures.js';
import {
  billedPieces,
  blenderProcesses,
  startE2E,
  submit,
  tinyRender,
  validationOutcome,
  waitUntil,
  workDirOf,
  type E2E,
} from '../helpers/e2e.js';

const FRAMES = 10;
let e2e: E2E;

beforeAll(async () => {
  // Two CPU slots, one core each.
  e2e = await startE2E({ workers: 2 });
}, 120_000);
afterAll(async () => {
  await e2e?.svc.close();
});

describe('two slots, one job', () => {
  it('each slot loads the scene once; both render frames until none is left, ending within about a frame', async () => {
    const { client, svc } = e2e;
    const id = await submit(client, await buildFixture('basic'));
    expect((await validationOutcome(client, id)).status).toBe('validated');
    await client.renderJob(id, tinyRender(`1-${FRAMES}`, { sampleCount: 128 }));
    const done = await client.waitForStatus(id, ['completed', 'failed'], { intervalMs: 200, timeoutMs: 180_000 });
    expect(done.failedReason ?? null).toBeNull();
    const names = ((await client.getDownloads(id)).frameOutputs ?? []).map((f) => f.fileName);
    expect([...names].sort()).toEqual(
      Array.from({ length: FRAMES }, (_, i) => `f_${String(i + 1).padStart(4, '0')}.png`),
    );
    expect(await client.getJobProgress(id)).toMatchObject({ framesDone: FRAMES, framesTotal: FRAMES, percent: 100 });

    const pieces = billedPieces(svc.logs, id);
    const frames = pieces.filter((p) => p.frame !== undefined);
    const lanes = [...new Set(frames.map((p) => p.lane))].sort();
    // Both slots rendered, each in one warm Blender that loaded the scene once.
    expect(lanes).toEqual(['cpu-0', 'cpu-1']);
    for (const lane of lanes) {
      expect(new Set(frames.filter((p) => p.lane === lane).map((p) => p.warm)).size, lane).toBe(1);
      expect(
        pieces.filter((p) => p.lane === lane && p.piece === 'load'),
        lane,
      ).toHaveLength(1);
    }
    expect(frames.map((p) => p.frame).sort((a, b) => a! - b!)).toEqual(Array.from({ length: FRAMES }, (_, i) => i + 1));
    // Dynamic claims: the slots finish within about one frame of each other (the log's own clock;
    // a frame's piece is logged when it ends). Generous: two frames plus a second for a busy machine.
    const endOf = (lane: string) => Math.max(...frames.filter((p) => p.lane === lane).map((p) => p.time));
    const longest = Math.max(...frames.map((p) => p.ms));
    expect(Math.abs(endOf('cpu-0') - endOf('cpu-1'))).toBeLessThanOrEqual(2 * longest + 1000);

    // The job ended: its warm Blenders went with it.
    await waitUntil('the warm Blenders to end', () => blenderProcesses(workDirOf(svc, id)).length === 0, {
      timeoutMs: 30_000,
    });
  }, 240_000);
});
