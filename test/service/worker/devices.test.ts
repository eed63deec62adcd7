// devices.ts: nvidia-smi parsing and detection (no GPU on this machine), the capability probe
// against the real (Debian) Blender, slot planning and the capabilities offered to a render.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BuildCapabilities,
  BuildCapabilitiesCache,
  detectGpuInventory,
  detectGpus,
  type GpuInfo,
  parseCapabilitiesLine,
  parseNvidiaSmiCsv,
  probeBuildCapabilities,
} from '../../../blender/devices.js';
import { capabilitiesFor, planSlots } from '../../../service/worker/runtime/devices.js';
import { resolveFinalConfig } from '../../../service/domain/final-config.js';
import { renderInvocation, warmInvocation } from '../../../blender/render/render-invocation.js';
import type { SceneMetadata } from '../../../shared/api/scene.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
const SAMPLE = [
  '0, GPU-8f0c1a2b-0000-1111-2222-333344445555, NVIDIA H100 80GB HBM3, 81559',
  '1, GPU-9a1d2e3f-6666-7777-8888-999900001111, NVIDIA RTX A6000, 49140',
  '2, GPU-00000000-aaaa-bbbb-cccc-dddddddddddd, Tesla T4, Rev 2, [N/A]',
  '',
  'No devices were found',
].join('\n');
const gpu = (index: number): GpuInfo => ({ index, uuid: `GPU-${index}`, name: 'NVIDIA L4', memoryMiB: 23034 });

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-devices-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('nvidia-smi', () => {
  it('parses the CSV: names with commas, unknown memory as 0, other lines skipped', () => {
    expect(parseNvidiaSmiCsv(SAMPLE)).toEqual([
      { index: 0, uuid: 'GPU-8f0c1a2b-0000-1111-2222-333344445555', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559 },
      { index: 1, uuid: 'GPU-9a1d2e3f-6666-7777-8888-999900001111', name: 'NVIDIA RTX A6000', memoryMiB: 49140 },
      { index: 2, uuid: 'GPU-00000000-aaaa-bbbb-cccc-dddddddddddd', name: 'Tesla T4, Rev 2', memoryMiB: 0 },
    ]);
    expect(parseNvidiaSmiCsv('')).toEqual([]);
  });

  // Each fixture is a real machine's answer to exactly the arguments detectGpuInventory passes
  // (captured on lent GPU machines). There, the worker's own code (detectGpuInventory, planSlots,
  // warmInvocation/renderInvocation) ran against the driver, and the slot's env given to the CUDA
  // runtime (PyTorch) showed exactly this GPU; an unknown UUID showed none. H100: 2026-11-24;
  // H200: 2026-11-27, driver 580.159.04.
  it.each([
    ['h100-80gb.csv', 'NVIDIA H100 80GB HBM3', 81559],
    ['h200.csv', 'NVIDIA H200', 143771],
  ])(
    'parses what a real GPU machine printed (%s) and plans one slot pinned to its UUID',
    async (file, name, memoryMiB) => {
      const text = await readFile(new URL(`../../fixtures/nvidia-smi/${file}`, import.meta.url), 'utf8');
      const gpus = parseNvidiaSmiCsv(text);
      expect(gpus).toHaveLength(1);
      expect(gpus[0]).toMatchObject({ index: 0, name, memoryMiB });
      const uuid = gpus[0]!.uuid;
      expect(uuid).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const slots = planSlots({ gpus, cpuCount: 16, machineCores: 16 });
      // The slot's memory is the GPU's VRAM, as the report gave it: placement compares frames' peaks with it.
      expect(slots).toEqual([{ id: `gpu-${uuid}`, kind: 'gpu', gpuUuids: [uuid], memoryBytes: memoryMiB * 2 ** 20 }]);
      const base = {
        sceneFile: '/p/scene.blend',
        settingsFile: '/p/settings.json',
        attemptDir: '/p/attempt',
        gpuUuids: slots[0]!.gpuUuids,
      };
      expect(warmInvocation(base).env).toEqual({ CUDA_VISIBLE_DEVICES: uuid });
      expect(renderInvocation({ ...base, chunk: { start: 1, end: 2, step: 1 } }).env).toEqual({
        CUDA_VISIBLE_DEVICES: uuid,
      });
    },
  );

  it('a missing or failing nvidia-smi gives no GPU and a reason, never an error', async () => {
    expect(await detectGpus({ nvidiaSmi: join(work, 'no-such-nvidia-smi') })).toEqual([]);
    const missing = await detectGpuInventory({ nvidiaSmi: join(work, 'no-such-nvidia-smi') });
    expect(missing).toEqual({ gpus: [], note: expect.stringMatching(/not found/) });
    const failing = join(work, 'failing-smi');
    await writeFile(
      failing,
      '#!/bin/sh\necho "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."\nexit 9\n',
    );
    await chmod(failing, 0o755);
    expect(await detectGpuInventory({ nvidiaSmi: failing })).toEqual({
      gpus: [],
      note: expect.stringMatching(/failed: NVIDIA-SMI has failed/),
    });
  });

  it('runs the query and parses its answer (a script standing in for the driver tool)', async () => {
    const fake = join(work, 'fake-smi');
    await writeFile(
      fake,
      `#!/bin/sh\n[ "$1" = "--query-gpu=index,uuid,name,memory.total" ] && [ "$2" = ` +
        `"--format=csv,noheader,nounits" ] || exit 2\ncat <<'X'\n${SAMPLE}\nX\n`,
    );
    await chmod(fake, 0o755);
    expect((await detectGpus({ nvidiaSmi: fake })).map((g) => g.index)).toEqual([0, 1, 2]);
  });
});

describe('build capabilities', () => {
  it("Debian's Blender: no OpenImageDenoise, GPU backends within CUDA and HIP, no precompiled kernels", async () => {
    const caps = await probeBuildCapabilities(BLENDER);
    expect(caps.hasOpenImageDenoise).toBe(false);
    for (const b of caps.cyclesBackends) expect(['CUDA', 'HIP']).toContain(b);
    expect(caps.precompiledKernels).toEqual([]);
  }, 60_000);

  it('parses the probe line: kernel files say which backends need no compiler', () => {
    const line =
      'RB_CAPS {"oidn": true, "backends": ["NONE", "CUDA", "OPTIX", "HIP"], "kernels": ' +
      '["kernel_sm_86.cubin.zst", "kernel_optix.ptx.zst", "kernel_gfx1030.fatbin.zst"]}';
    expect(parseCapabilitiesLine(['Blender 4.2.3', line])).toEqual({
      hasOpenImageDenoise: true,
      cyclesBackends: ['CUDA', 'OPTIX', 'HIP'],
      precompiledKernels: ['CUDA', 'OPTIX', 'HIP'],
    });
    expect(parseCapabilitiesLine(['RB_CAPS {oops'])).toBeUndefined();
    expect(parseCapabilitiesLine([])).toBeUndefined();
  });

  it('the cache asks each binary once and forgets failures', async () => {
    const cache = new BuildCapabilitiesCache();
    let calls = 0;
    const caps: BuildCapabilities = { hasOpenImageDenoise: false, cyclesBackends: [], precompiledKernels: [] };
    const run = async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
      return caps;
    };
    await expect(cache.get('/no/such/blender', run)).rejects.toThrow('boom');
    expect(await cache.get('/no/such/blender', run)).toBe(caps);
    expect(await cache.get('/no/such/blender', run)).toBe(caps);
    expect(calls).toBe(2);
  });
});

describe('planSlots', () => {
  it('one slot per GPU pinned by UUID; CPU slots beside them only when asked, sharing the cores left', () => {
    const vram = 23034 * 2 ** 20;
    expect(planSlots({ gpus: [gpu(0), gpu(1)], cpuCount: 16 })).toEqual([
      { id: 'gpu-GPU-0', kind: 'gpu', gpuUuids: ['GPU-0'], memoryBytes: vram },
      { id: 'gpu-GPU-1', kind: 'gpu', gpuUuids: ['GPU-1'], memoryBytes: vram },
    ]);
    // The CPU slot's memory is the RAM it is given (--slot-memory, else the machine's).
    expect(planSlots({ gpus: [gpu(0)], cpuSlots: 1, workers: 5, cpuCount: 16, cpuMemoryBytes: 2 ** 36 })).toEqual([
      { id: 'gpu-GPU-0', kind: 'gpu', gpuUuids: ['GPU-0'], memoryBytes: vram },
      { id: 'cpu-0', kind: 'cpu', gpuUuids: [], threads: 15, memoryBytes: 2 ** 36 },
    ]);
  });

  it('without GPUs: `workers` CPU slots (default 1, all cores), each with its share of threads', () => {
    expect(planSlots({ gpus: [] })).toEqual([{ id: 'cpu-0', kind: 'cpu', gpuUuids: [] }]);
    expect(planSlots({ gpus: [], workers: 0 })).toHaveLength(1);
    expect(planSlots({ gpus: [], workers: 3, cpuCount: 8 }).map((s) => s.threads)).toEqual([2, 2, 2]);
    expect(planSlots({ gpus: [], workers: 4, cpuCount: 2 }).map((s) => s.threads)).toEqual([1, 1, 1, 1]);
  });

  it('a worker held to fewer cores than the machine has (taskset) renders with that many threads', () => {
    expect(planSlots({ gpus: [], cpuCount: 1, machineCores: 2 })).toEqual([
      { id: 'cpu-0', kind: 'cpu', gpuUuids: [], threads: 1 },
    ]);
    expect(planSlots({ gpus: [], cpuCount: 2, machineCores: 2 })).toEqual([{ id: 'cpu-0', kind: 'cpu', gpuUuids: [] }]);
  });
});

describe('capabilitiesFor', () => {
  const debian: BuildCapabilities = {
    hasOpenImageDenoise: false,
    cyclesBackends: ['CUDA', 'HIP'],
    precompiledKernels: [],
  };
  const official: BuildCapabilities = {
    hasOpenImageDenoise: true,
    cyclesBackends: ['CUDA', 'OPTIX', 'HIP'],
    precompiledKernels: ['CUDA', 'OPTIX', 'HIP'],
  };

  it('no GPU: no backend, whatever the build has', () => {
    expect(capabilitiesFor({ version: '4.2.3', capabilities: official }, { gpus: [] })).toEqual({
      blenderVersion: '4.2.3',
      hasOpenImageDenoise: true,
      gpuBackends: [],
      gpuCount: 0,
    });
  });

  it('NVIDIA GPUs: CUDA, plus OPTIX when listed, never HIP; kernels needed unless runtime compiling is allowed', () => {
    const inv = { gpus: [gpu(0), gpu(1)] };
    const version = { major: 4, minor: 2, patch: 3, text: '4.2.3' };
    expect(capabilitiesFor({ version, capabilities: official, note: 'substituted' }, inv)).toEqual({
      blenderVersion: '4.2.3',
      buildNote: 'substituted',
      hasOpenImageDenoise: true,
      gpuBackends: ['CUDA', 'OPTIX'],
      // One render process uses one GPU (its slot's); the two GPUs render chunks side by side.
      gpuCount: 1,
      parallelGpus: 2,
    });
    expect(capabilitiesFor({ version: '3.4.1', capabilities: debian }, inv)).toMatchObject({
      gpuBackends: [],
      gpuCount: 0,
    });
    expect(
      capabilitiesFor({ version: '3.4.1', capabilities: debian }, inv, { runtimeKernelCompile: true }),
    ).toMatchObject({ gpuBackends: ['CUDA'], gpuCount: 1 });
  });

  // The GPUs are simulated (no GPU on these machines): what nvidia-smi would list.
  it.each([1, 2, 4])('%i GPU(s): finalConfig.gpuCount is 1, the GPUs one render process uses', (n) => {
    const gpus = Array.from({ length: n }, (_, i) => gpu(i));
    const caps = capabilitiesFor({ version: '4.2.3', capabilities: official }, { gpus });
    expect(planSlots({ gpus, cpuCount: 16 }).map((s) => s.gpuUuids)).toEqual(gpus.map((g) => [g.uuid]));
    const scene = { renderEngine: 'CYCLES', renderFrameRange: [1, 2] } as SceneMetadata;
    const own = resolveFinalConfig(scene, {}, { colorManagementPreset: 'default', computeDeviceType: 'CUDA' }, caps);
    expect(own.finalConfig).toMatchObject({ computeDeviceType: 'CUDA', renderDevice: 'GPU', gpuCount: 1 });
    expect(own.warnings).toEqual([]);
    const asked = resolveFinalConfig(
      scene,
      {},
      { colorManagementPreset: 'default', computeDeviceType: 'CUDA', gpuCount: 4 },
      caps,
    );
    expect(asked.finalConfig.gpuCount).toBe(1);
    expect(asked.warnings.map((w) => w.message)).toEqual([
      `gpuCount 4 asked for; each render process uses 1 ` +
        `GPU${n > 1 ? ` (this worker's ${n} GPUs render separate chunks side by side)` : ''}`,
    ]);
  });
});
