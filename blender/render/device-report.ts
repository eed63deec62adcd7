// The device a chunk's Blender really rendered on, from render_setup.py's `RB_DEVICE {json}` line.
// The plan (finalConfig) only says what was asked: a slot whose GPU Cycles cannot see (no driver,
// a GPU taken away) renders on the CPU. The worker bills what this reports (billedRun).

export interface DeviceReport {
  /** The compute device type the settings asked for. */
  requested: string;
  /** What Cycles renders on: CPU after a fallback, ENGINE_DEFAULT for engines other than Cycles. */
  device: string;
  /** GPUs Cycles renders with (0 on the CPU). */
  gpus: number;
}

/** Parses `RB_DEVICE {"requested": "CUDA", "device": "CPU", "gpus": 0}`; undefined for other lines. */
export function parseDeviceLine(line: string): DeviceReport | undefined {
  if (!line.startsWith('RB_DEVICE ')) return undefined;
  try {
    const raw = JSON.parse(line.slice('RB_DEVICE '.length)) as Partial<Record<keyof DeviceReport, unknown>>;
    if (typeof raw.device !== 'string') return undefined;
    return {
      requested: typeof raw.requested === 'string' ? raw.requested : 'CPU',
      device: raw.device,
      gpus: typeof raw.gpus === 'number' && Number.isFinite(raw.gpus) ? Math.max(0, Math.trunc(raw.gpus)) : 0,
    };
  } catch {
    return undefined;
  }
}
