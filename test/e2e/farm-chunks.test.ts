// Warm-mode chunks follow the farm the worker registry shows: a farm of one render slot gets
// chunks of 8 frames all along (each chunk is a task and a render call), a farm of several ends in
// single frames so that every slot finishes at about the same time. Real service, worker, Blender.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import type { WorkerReport } from '../../service/ports/workers.js';
import { buildFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let client: RenderJobClient;
let blend: string;

beforeAll(async () => {
  blend = await buildFixture('basic');
  svc = await startTestService({ workers: 1, worker: { runtime: { heartbeatMs: 200, pollMs: 100 } } });
  client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
}, 120_000);
afterAll(async () => {
  await svc?.close();
});

/** Renders frames 1-20 of the basic scene (tiny, 1 sample); the frames of each render chunk, in order. */
async function renderedChunks(): Promise<number[][]> {
  const { slug } = await client.uploadProject(blend);
  const job = await client.createJob({ slug });
  await client.validateJob(job.id, {});
  await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
  await client.renderJob(job.id, {
    requestedRenderConfig: {
      colorManagementPreset: 'default',
      frameRanges: ['1-20'],
      resolution: [32, 24],
      sampleCount: 1,
    },
    // The chunk sizes are what is measured: no preview chunks first (extension scheduling).
    scheduling: { previewFrames: false },
  });
  const done = await client.waitForStatus(job.id, ['completed', 'failed'], { intervalMs: 250, timeoutMs: 180_000 });
  expect(done.status).toBe('completed');
  const runs = await svc.service.ports.queue.jobTaskRuns(job.id);
  return runs.filter((r) => r.kind === 'render-chunk').map((r) => r.frames ?? []);
}

describe('warm chunks sized for the farm', () => {
  it('the only render slot of the farm renders 20 frames in 3 chunks of at most 8', { timeout: 240_000 }, async () => {
    expect(await renderedChunks()).toEqual([
      [1, 2, 3, 4, 5, 6, 7, 8],
      [9, 10, 11, 12, 13, 14, 15, 16],
      [17, 18, 19, 20],
    ]);
  });

  it(
    'with another live worker in the registry, chunks shrink to single frames at the end',
    { timeout: 240_000 },
    async () => {
      // A second machine with one CPU slot, heard from just now (it never claims here: the frames
      // all go to the local slot, but the plan must leave room for it).
      const other: WorkerReport = {
        id: 'other:1',
        name: 'other',
        hostname: 'other',
        version: 'test',
        startedAt: new Date().toISOString(),
        state: 'running',
        heartbeatIntervalMs: 600_000,
        slots: [
          {
            id: 'control',
            device: { kind: 'control', name: 'CPU', uuid: null },
            state: 'idle',
            tasks: [],
            warmJobId: null,
          },
          { id: 'cpu-0', device: { kind: 'cpu', name: 'CPU', uuid: null }, state: 'idle', tasks: [], warmJobId: null },
        ],
        builds: [],
        gpus: [],
        blocklistedBy: [],
      };
      await svc.service.ports.workers!.registry.report(other);
      try {
        const chunks = await renderedChunks();
        expect(chunks.flat()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        // Two slots: a quarter of what is left per chunk (5, 4, 3, ...), then one frame per chunk.
        expect(chunks.map((c) => c.length)).toEqual([5, 4, 3, 2, 2, 1, 1, 1, 1]);
      } finally {
        await svc.service.ports.workers!.registry.report({ ...other, state: 'stopped' });
      }
    },
  );
});
