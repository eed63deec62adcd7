// Records each finished frame's statistics (extension frame-stats) for the job's page, the
// frames route and the ETA: written to the service's store (directly, or through the worker API
// from another machine) off Blender's output, in the job's bookkeeping order. A statistic that
// cannot be written is logged and dropped: it never fails a frame.
import type { Logger } from 'pino';
import type { DeviceReport } from '../../../blender/render/device-report.js';
import type { FrameMemory } from '../../../blender/render/progress-parser.js';
import { billedRun } from '../../domain/normalized-seconds.js';
import type { FrameStat } from '../../ports/frame-stats.js';
import type { WorkerEnv } from '../runtime/env.js';
import { buildFor } from '../../../blender/builds.js';
import { raiseJobPeak } from './job-peak.js';

export interface FinishedFrame {
  jobId: string;
  frame: number;
  attempt: number;
  seconds: number;
  memory: FrameMemory;
  /** What render_setup.py said the run renders on (undefined: not said yet, taken as the CPU). */
  device: DeviceReport | undefined;
  /** The lane (slot) name: `cpu-0`, `gpu-<uuid>`. */
  lane: string;
  /** The planned Blender version (`4.2`): this machine's build of it is named. */
  plannedVersion: string | undefined;
}

/** The row for one frame: RAM on the CPU, the device's own peak on a GPU (where RAM says little). */
export function frameStat(
  env: Pick<WorkerEnv, 'builds' | 'workerName'>,
  f: FinishedFrame,
  now = new Date(),
): FrameStat {
  const device = billedRun(0, f.device).device;
  const build = buildFor(env.builds, f.plannedVersion) ?? env.builds.find((b) => b.isDefault);
  return {
    jobId: f.jobId,
    frame: f.frame,
    attempt: f.attempt,
    renderSeconds: Math.max(0, Math.round(f.seconds * 1000) / 1000),
    peakMemoryBytes: device === 'CPU' ? f.memory.hostPeakBytes : f.memory.devicePeakBytes,
    device,
    slot: `${env.workerName ?? 'worker'}/${f.lane}`,
    blenderVersion: build?.version.text ?? f.plannedVersion ?? null,
    finishedAt: now.toISOString(),
  };
}

/** Writes one frame's row, and raises the job's measured memory need; failures are logged, never thrown. */
export async function recordFrame(
  env: Pick<WorkerEnv, 'builds' | 'workerName' | 'frameStats' | 'jobs'>,
  f: FinishedFrame,
  log: Logger,
): Promise<void> {
  const stat = frameStat(env, f);
  await raiseJobPeak(env.jobs, f.jobId, stat.peakMemoryBytes).catch((err: unknown) =>
    log.warn({ err, frame: f.frame }, "the job's memory need not recorded"),
  );
  if (!env.frameStats) return;
  try {
    await env.frameStats.recordFrames([stat]);
  } catch (err) {
    log.warn({ err, frame: f.frame }, 'frame statistics not recorded');
  }
}
