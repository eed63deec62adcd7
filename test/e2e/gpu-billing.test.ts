// GPU billing with the real worker runtime and real Blender, the worker's device override
// simulating 1, 2 and 4 NVIDIA GPUs. There is no GPU on these machines: the simulated inventory is
// the test double (the only one), standing in for nvidia-smi. Everything after it is real: one
// render slot per simulated GPU pinned with CUDA_VISIBLE_DEVICES, a CUDA plan (Debian's Blender
// lists CUDA; runtimeKernelCompile counts it usable without shipped kernels), and Blender that finds
// no CUDA device behind the pin and renders on the CPU. That is the CPU-fallback case: each run must
// be billed at the CPU factor 1, never at CUDA's 4 times the machine's GPU count, and finalConfig
// must say the render ran on the CPU. Billing of runs that really used a GPU (only reported by
// render_setup.py on a machine with one) is checked at the unit level in
// test/service/domain/normalized-seconds.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { RenderJobClient } from '../../shared/client/client.js';
import type { GpuInfo } from '../../blender/devices.js';
import { buildFixture } from '../helpers/fixtures.js';
import { billedPieces } from '../helpers/e2e.js';
import { startTestService } from '../helpers/service.js';

/** The test double: GPUs as nvidia-smi would list them (UUIDs no driver knows). */
function simulatedGpus(n: number): GpuInfo[] {
  return Array.from({ length: n }, (_, i) => ({
    index: i,
    uuid: `GPU-5e0f0000-0000-4000-8000-00000000000${i}`,
    name: 'Simulated GPU (test double)',
    memoryMiB: 8192,
  }));
}

let blend: string;
beforeAll(async () => {
  blend = await buildFixture('basic');
}, 120_000);

describe('normalizedSeconds and finalConfig.gpuCount with simulated GPUs (CPU fallback in real Blender)', () => {
  it.each([1, 2, 4])(
    '%i simulated GPU(s): 1 GPU per render process; every run billed at the CPU factor it really used',
    async (n) => {
      const svc = await startTestService({
        workers: 1,
        worker: {
          runtime: { heartbeatMs: 200, pollMs: 100 },
          devices: { gpus: simulatedGpus(n) },
          capabilities: { runtimeKernelCompile: true },
          // Frames are claimed one by one (the warm mode's default): they spread over the GPU slots.
        },
      });
      try {
        const client = new RenderJobClient({ baseUrl: svc.baseUrl, apiKey: svc.apiKey });
        const target = await client.uploadProject(blend);
        const job = await client.createJob({ slug: target.slug });
        await client.validateJob(job.id, {});
        await client.waitForStatus(job.id, ['validated'], { intervalMs: 200, timeoutMs: 90_000 });
        await client.renderJob(job.id, {
          requestedRenderConfig: {
            colorManagementPreset: 'default',
            frameRanges: ['1-4'],
            resolution: [64, 48],
            sampleCount: 2,
            computeDeviceType: 'CUDA',
            gpuCount: n,
          },
        });
        const done = await client.waitForStatus(job.id, ['completed'], { intervalMs: 250, timeoutMs: 240_000 });
        // What each warm Blender billed: its load, and each frame it rendered.
        const runs = billedPieces(svc.logs, job.id);
        expect(
          runs
            .filter((r) => r.frame !== undefined)
            .map((r) => r.frame)
            .sort(),
        ).toEqual([1, 2, 3, 4]);
        // Sum over pieces of seconds x factor(CPU) = 1; the log has milliseconds, the bill 0.1 s.
        // (Before the fix: x 4 for CUDA x the machine's GPU count.)
        const seconds = runs.reduce((s, r) => s + Number(((r.ms ?? 0) / 1000).toFixed(3)), 0);
        expect(
          Math.abs(done.normalizedSeconds! - seconds),
          `billed ${done.normalizedSeconds} for ${seconds.toFixed(3)} s on the CPU`,
        ).toBeLessThanOrEqual(0.051);
        for (const r of runs) {
          expect(r.device).toBe('CPU');
          expect(r.lane).toMatch(/^gpu-GPU-5e0f/);
        }
        const final = done.finalConfig!;
        const codes = (final.analysisWarnings ?? []).map((w) => w.code);
        // Planned: CUDA with one GPU per render process, whatever the machine has.
        if (n > 1)
          expect(final.analysisWarnings?.find((w) => w.code === 'GPU_COUNT_REDUCED')?.message).toContain(
            `each render process uses 1 GPU (this worker's ${n} GPUs`,
          );
        else expect(codes).not.toContain('GPU_COUNT_REDUCED');
        // Really used: Blender found no CUDA device behind the pin, so the render ran on the CPU.
        expect(final.analysisWarnings?.find((w) => w.code === 'DEVICE_FALLBACK')?.message).toContain(
          'CUDA was planned (1 GPU per render process)',
        );
        expect(final.notes).toContain('no CUDA device is visible: rendering on the CPU');
        expect(final).toMatchObject({ computeDeviceType: 'CPU', renderDevice: 'CPU', gpuCount: 0 });
      } finally {
        await svc.close();
      }
    },
    300_000,
  );
});
