// `normalizedSeconds`: render time made comparable across devices, for billing and quotas.
// Each Blender run's seconds x the factor of the device that run really used (render_setup.py
// reports it: a chunk planned on a GPU that found none renders, and bills, on the CPU). One
// second of a GPU does more work than one second of a CPU core pool. The factors are this
// service's documented convention (docs/reference/api-decisions.md), not a measurement of any machine.
// Parallel chunks each add their own seconds: the machine's GPU count never multiplies the sum.
import type { z } from 'zod';
import type { AnalysisWarning } from '../../shared/api/scene.js';
import type { FinalConfig } from '../../shared/api/analysis.js';
import type { ComputeDeviceType } from '../../shared/api/enums.js';
import type { DeviceReport } from '../../blender/render/device-report.js';

type DeviceType = z.infer<typeof ComputeDeviceType>;

export const DEVICE_PERFORMANCE_FACTORS: Readonly<Record<DeviceType, number>> = {
  CPU: 1,
  CUDA: 4,
  HIP: 4,
  ONEAPI: 4,
  METAL: 3,
  OPTIX: 5,
};

/** One Blender run of a job, as the chunk that ran it recorded it. */
export interface RenderRun {
  seconds: number;
  /** The device the run really rendered on; CPU when it fell back, or never got to render. */
  device: DeviceType;
  /** GPUs the run rendered with (1 on a pinned slot); ignored for the CPU. Default 1. */
  gpus?: number;
}

function runFactor(run: RenderRun): number {
  const gpus = run.device === 'CPU' ? 1 : Math.max(1, Math.trunc(run.gpus ?? 1));
  return DEVICE_PERFORMANCE_FACTORS[run.device] * gpus;
}

/** Sum over runs of seconds x factor(device the run used) x its GPUs, to 0.1 s. */
export function normalizedSeconds(runs: readonly RenderRun[]): number {
  const sum = runs.reduce((acc, r) => acc + Math.max(0, r.seconds) * runFactor(r), 0);
  return Math.round(sum * 10) / 10;
}

/** One line of the run log: `seconds device gpus`, e.g. `12.345 CUDA 1`. */
export function formatRunLine(run: RenderRun): string {
  return `${run.seconds.toFixed(3)} ${run.device} ${run.device === 'CPU' ? 0 : Math.max(1, run.gpus ?? 1)}`;
}

/**
 * Parses formatRunLine's lines (blank and bad lines skipped). A bare number (a log written before
 * devices were recorded) counts on `legacyDevice` with one GPU.
 */
export function parseRunLines(text: string, legacyDevice: DeviceType): RenderRun[] {
  const runs: RenderRun[] = [];
  for (const line of text.split(/\r?\n/)) {
    const [secs, device, gpus] = line.trim().split(/\s+/);
    const seconds = Number(secs);
    if (!secs || !Number.isFinite(seconds)) continue;
    if (device === undefined) {
      runs.push({ seconds, device: legacyDevice, gpus: 1 });
    } else if (device in DEVICE_PERFORMANCE_FACTORS) {
      runs.push({ seconds, device: device as DeviceType, gpus: Number(gpus) || 0 });
    }
  }
  return runs;
}

/**
 * finalConfig as the runs show it: when a GPU was planned and no run could use one, the render
 * really ran on the CPU, and finalConfig says so; when only some runs fell back, a warning says
 * how many (they were billed at the CPU factor). Returns undefined when nothing changes.
 */
export function finalConfigFromRuns(final: FinalConfig, runs: readonly RenderRun[]): FinalConfig | undefined {
  const planned = final.computeDeviceType ?? 'CPU';
  if (planned === 'CPU' || runs.length === 0) return undefined;
  const onCpu = runs.filter((r) => r.device === 'CPU').length;
  if (onCpu === 0) return undefined;
  const all = onCpu === runs.length;
  const warning: AnalysisWarning = {
    code: 'DEVICE_FALLBACK',
    blocking: false,
    message: all
      ? `${planned} was planned (${final.gpuCount ?? 1} GPU per render process) but no Blender run found a ` +
        `usable ${planned} device: the render ran on the CPU and is billed at the CPU factor`
      : `${onCpu} of ${runs.length} Blender runs found no usable ${planned} device and rendered on the CPU ` +
        `(billed at the CPU factor)`,
  };
  return {
    ...final,
    ...(all ? { computeDeviceType: 'CPU', renderDevice: 'CPU', gpuCount: 0, denoisingUseGpu: false } : {}),
    analysisWarnings: [...(final.analysisWarnings ?? []), warning],
    notes: [final.notes, warning.message].filter(Boolean).join('\n'),
  };
}

/**
 * The run to bill for `seconds` of Blender. No report (setup failed, or Blender died before it)
 * means nothing rendered on a GPU: CPU. Engines other than Cycles (EEVEE, Workbench) do not use
 * the Cycles compute device: CPU factor too.
 */
export function billedRun(seconds: number, report: DeviceReport | undefined): RenderRun {
  const device = report?.device;
  if (!device || device === 'CPU' || !(device in DEVICE_PERFORMANCE_FACTORS)) return { seconds, device: 'CPU' };
  return { seconds, device: device as RenderRun['device'], gpus: Math.max(1, report.gpus) };
}
