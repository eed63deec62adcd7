// Billing of each Blender run at the factor of the device it really used, and what finalConfig
// says about it. Pure parts: no GPU exists on these machines, so runs that really rendered on a
// GPU are given as render_setup.py's RB_DEVICE line would report them on a machine with one (the
// CPU fallback runs for real in test/e2e/gpu-billing.test.ts and test/service/worker/render-setup.test.ts).
import { describe, expect, it } from 'vitest';
import type { FinalConfig } from '../../../shared/api/analysis.js';
import {
  billedRun,
  finalConfigFromRuns,
  formatRunLine,
  normalizedSeconds,
  parseRunLines,
  type RenderRun,
} from '../../../service/domain/normalized-seconds.js';
import { parseDeviceLine } from '../../../blender/render/device-report.js';

const cudaLine = 'RB_DEVICE {"requested": "CUDA", "device": "CUDA", "gpus": 1}';
const fallbackLine = 'RB_DEVICE {"requested": "CUDA", "device": "CPU", "gpus": 0}';

describe('normalizedSeconds', () => {
  it('sums seconds x the factor of each run, never x the machine GPU count', () => {
    // Four slots of a 4-GPU machine, each pinned to one GPU, ran 10 s each: 4 x 10 s x CUDA's 4.
    const pinned: RenderRun[] = [1, 2, 3, 4].map(() => billedRun(10, parseDeviceLine(cudaLine)));
    expect(pinned.every((r) => r.device === 'CUDA' && r.gpus === 1)).toBe(true);
    expect(normalizedSeconds(pinned)).toBe(160);
    // One of them fell back to the CPU: that run counts at factor 1.
    const mixed = [...pinned.slice(0, 3), billedRun(10, parseDeviceLine(fallbackLine))];
    expect(mixed[3]).toEqual({ seconds: 10, device: 'CPU' });
    expect(normalizedSeconds(mixed)).toBe(130);
    // OptiX 5, Metal 3; a run that really used two GPUs (not pinned) counts both; 0.1 s rounding.
    expect(
      normalizedSeconds([
        { seconds: 1.02, device: 'OPTIX', gpus: 1 },
        { seconds: 2, device: 'METAL' },
        { seconds: 1, device: 'CUDA', gpus: 2 },
      ]),
    ).toBe(19.1);
    expect(normalizedSeconds([])).toBe(0);
  });

  it('bills the CPU when there is no report (setup failed) or the engine is not Cycles', () => {
    expect(billedRun(3, undefined)).toEqual({ seconds: 3, device: 'CPU' });
    expect(
      billedRun(3, parseDeviceLine('RB_DEVICE {"requested": "CUDA", "device": "ENGINE_DEFAULT", "gpus": 0}')),
    ).toEqual({ seconds: 3, device: 'CPU' });
    expect(parseDeviceLine('RB_DEVICE {not json')).toBeUndefined();
    expect(parseDeviceLine('RB_SETUP_OK {}')).toBeUndefined();
  });

  it('run log lines round-trip; bare numbers from older logs count on the planned device', () => {
    const runs: RenderRun[] = [
      { seconds: 12.3456, device: 'CUDA', gpus: 1 },
      { seconds: 2, device: 'CPU' },
    ];
    const text = `${runs.map(formatRunLine).join('\n')}\n4.5\n\nnonsense CUDA\n1 QUANTUM 1\n`;
    expect(text.split('\n').slice(0, 2)).toEqual(['12.346 CUDA 1', '2.000 CPU 0']);
    expect(parseRunLines(text, 'OPTIX')).toEqual([
      { seconds: 12.346, device: 'CUDA', gpus: 1 },
      { seconds: 2, device: 'CPU', gpus: 0 },
      { seconds: 4.5, device: 'OPTIX', gpus: 1 },
    ]);
  });
});

describe('finalConfigFromRuns', () => {
  const planned = {
    computeDeviceType: 'CUDA',
    renderDevice: 'GPU',
    gpuCount: 1,
    denoisingUseGpu: true,
    notes: 'mine',
    analysisWarnings: [],
  } as FinalConfig;

  it('keeps the plan when every run used the GPU, or the plan was the CPU', () => {
    expect(finalConfigFromRuns(planned, [{ seconds: 1, device: 'CUDA', gpus: 1 }])).toBeUndefined();
    expect(
      finalConfigFromRuns({ ...planned, computeDeviceType: 'CPU' }, [{ seconds: 1, device: 'CPU' }]),
    ).toBeUndefined();
  });

  it('says CPU when no run found the GPU, and counts partial fallbacks', () => {
    const all = finalConfigFromRuns(planned, [
      { seconds: 1, device: 'CPU' },
      { seconds: 2, device: 'CPU' },
    ]);
    expect(all).toMatchObject({ computeDeviceType: 'CPU', renderDevice: 'CPU', gpuCount: 0, denoisingUseGpu: false });
    expect(all?.analysisWarnings?.[0]).toMatchObject({ code: 'DEVICE_FALLBACK', blocking: false });
    expect(all?.notes).toMatch(/^mine\nCUDA was planned \(1 GPU per render process\)/);
    const some = finalConfigFromRuns(planned, [
      { seconds: 1, device: 'CUDA', gpus: 1 },
      { seconds: 2, device: 'CPU' },
    ]);
    expect(some).toMatchObject({ computeDeviceType: 'CUDA', gpuCount: 1 });
    expect(some?.analysisWarnings?.[0]?.message).toContain('1 of 2 Blender runs found no usable CUDA device');
  });
});
