// Four finished frames and a progress row for a job in `rendering`, written through the service's
// ports as a worker would: frames 1-4 of 10 on two CPU slots (2, 2, 3 and 5 s), frames 5-6 rendering.
import type { FrameStat } from '../../service/ports/frame-stats.js';
import type { TestService } from './service.js';

export async function seedRenderingFrames(svc: TestService, jobId: string): Promise<void> {
  const now = Date.now();
  const row = (frame: number, seconds: number, slot: string): FrameStat => ({
    jobId,
    frame,
    attempt: 1,
    renderSeconds: seconds,
    peakMemoryBytes: 100_000_000 * frame,
    device: 'CPU',
    slot,
    blenderVersion: '4.2.3',
    finishedAt: new Date(now - 1000 * (5 - frame)).toISOString(),
  });
  await svc.service.ports.frameStats!.recordFrames([
    row(1, 2, 'w/cpu-0'),
    row(2, 2, 'w/cpu-1'),
    row(3, 3, 'w/cpu-0'),
    row(4, 5, 'w/cpu-1'),
  ]);
  await svc.service.ports.jobs.setProgress({
    jobId,
    status: 'rendering',
    framesTotal: 10,
    framesDone: 4,
    framesRendering: 2,
    framesFailed: 0,
    currentFrame: 5,
    currentSample: null,
    samplesTotal: null,
    percent: 40,
    etaSeconds: 9,
    updatedAt: new Date().toISOString(),
  });
}
