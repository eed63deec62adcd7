// `normalizedSeconds`: render time made comparable across devices, for billing and quotas.
// Render seconds x the device's factor: one second of a GPU does more work than one second of a
// CPU core pool. The factors are this service's documented convention (README "normalizedSeconds"),
// not a measurement of any one machine.
import type { z } from 'zod';
import type { ComputeDeviceType } from '../../shared/api/enums.js';

export const DEVICE_PERFORMANCE_FACTORS: Readonly<Record<z.infer<typeof ComputeDeviceType>, number>> = {
  CPU: 1,
  CUDA: 4,
  HIP: 4,
  ONEAPI: 4,
  METAL: 3,
  OPTIX: 5,
};

/** Seconds rendered on `device` (times the number of GPUs used) in normalized seconds, to 0.1 s. */
export function normalizedSeconds(renderSeconds: number, device: z.infer<typeof ComputeDeviceType> | undefined, gpus = 1): number {
  const factor = DEVICE_PERFORMANCE_FACTORS[device ?? 'CPU'] * (device && device !== 'CPU' ? Math.max(1, gpus) : 1);
  return Math.round(renderSeconds * factor * 10) / 10;
}
