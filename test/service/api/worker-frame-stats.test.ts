// Frame statistics from a worker on another machine: RemoteFrameStats (what `renderbridge worker
// --service-url` records frames with) through the worker API's frames route into the service's
// store, read back by GET /jobs/{id}/frames. Only for jobs of the worker's own leases; a
// repeated report replaces its row.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FrameStatsPage } from '../../../shared/api/frame-stats.js';
import { createWorkerToken } from '../../../service/domain/worker-tokens.js';
import type { FrameStat } from '../../../service/ports/frame-stats.js';
import { WorkerApiError } from '../../../service/worker-api/client.js';
import { RemoteFrameStats } from '../../../service/worker-api/remote-frame-stats.js';
import { createJob } from '../../helpers/flow.js';
import { useTestService } from '../../helpers/service.js';

const used = useTestService();
const { call } = used;

/** A worker token whose worker holds a lease on a task of `jobId`, as a claim makes it. */
async function workerOn(jobId: string): Promise<RemoteFrameStats> {
  const name = `w-${randomUUID().slice(0, 8)}`;
  const { token } = await createWorkerToken(used.svc.service.ports.workerTokens, name);
  const queue = used.svc.service.ports.queue;
  await queue.enqueue({ id: `finalize:${jobId}`, jobId, kind: 'finalize' });
  expect((await queue.claim(`${name}:4242:control`, ['finalize'], 60_000))?.jobId).toBe(jobId);
  return new RemoteFrameStats({ serviceUrls: [used.svc.origin], token, retryForMs: 0 });
}

const stat = (jobId: string, frame: number, over: Partial<FrameStat> = {}): FrameStat => ({
  jobId,
  frame,
  attempt: 1,
  renderSeconds: 12.5,
  peakMemoryBytes: 6 * 2 ** 30,
  device: 'OPTIX',
  slot: 'far-away/gpu-GPU-1',
  blenderVersion: '4.2.3',
  finishedAt: new Date().toISOString(),
  ...over,
});

describe('frame statistics through the worker API', () => {
  it('stores what a remote worker reports for its job, a repeat replacing its row', async () => {
    const id = (await createJob(call)).id;
    const remote = await workerOn(id);
    const before = Date.now();
    // A worker whose clock is far behind: the service stamps the frames on arrival.
    await remote.recordFrames([stat(id, 1, { finishedAt: '2001-01-01T00:00:00.000Z' }), stat(id, 2)]);
    await remote.recordFrames([stat(id, 2, { renderSeconds: 14 })]);
    const page = FrameStatsPage.parse((await call('GET', `/jobs/${id}/frames`)).body);
    expect(page.data.frames.map((f) => [f.frame, f.renderSeconds, f.device, f.peakMemoryBytes])).toEqual([
      [1, 12.5, 'OPTIX', 6 * 2 ** 30],
      [2, 14, 'OPTIX', 6 * 2 ** 30],
    ]);
    for (const f of page.data.frames) expect(Date.parse(f.finishedAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('refuses frames of a job the worker holds no task of, and rows naming another job', async () => {
    const mine = (await createJob(call)).id;
    const other = (await createJob(call)).id;
    const remote = await workerOn(mine);
    const refused = (await remote.recordFrames([stat(other, 1)]).catch((e: unknown) => e)) as WorkerApiError;
    expect(refused).toBeInstanceOf(WorkerApiError);
    expect(refused.status).toBe(404);
    const token = (await createWorkerToken(used.svc.service.ports.workerTokens, `x-${randomUUID().slice(0, 6)}`)).token;
    const mixed = await fetch(`${used.svc.origin}/internal/worker/v1/jobs/${mine}/frames`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ frames: [stat(other, 1)] }),
    });
    expect(mixed.status).toBe(400);
    expect(FrameStatsPage.parse((await call('GET', `/jobs/${other}/frames`)).body).data.frames).toEqual([]);
  });
});
