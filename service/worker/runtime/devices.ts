// The render slots the worker runs on this machine's devices, and the RenderCapabilities that
// resolveFinalConfig corrects a request against. What the devices and builds are (nvidia-smi,
// the Cycles backends of each build) is found by blender/devices.ts, which `renderbridge doctor`
// asks too.
import { availableParallelism, cpus } from 'node:os';
import type { RenderCapabilities } from '../../domain/final-config.js';
import type { BlenderVersion } from '../../../blender/version.js';
import type { BuildCapabilities, CyclesBackend, DeviceInventory, GpuInfo } from '../../../blender/devices.js';

/** One Blender process at a time runs in a slot. */
export interface Slot {
  /** `gpu-<uuid>` or `cpu-<n>`. */
  id: string;
  kind: 'gpu' | 'cpu';
  /** GPUs the slot's Blender may see (CUDA_VISIBLE_DEVICES); empty for CPU slots. */
  gpuUuids: string[];
  /** Render threads (`-t`) for CPU slots sharing the cores; undefined = all cores. */
  threads?: number;
  /**
   * Memory a frame may use here, bytes: the GPU's VRAM, or for a CPU slot the RAM it was given
   * (planSlots' cpuMemoryBytes). Undefined: unknown (placement then never refuses on memory).
   */
  memoryBytes?: number;
  /**
   * The slot's own memory cgroup (its `cgroup.procs`), which its Blenders join before they start,
   * so the kernel holds them to memoryBytes. Undefined: none (the machine's memory is the limit).
   */
  memoryCgroupProcs?: string;
}

export interface PlanSlotsOptions {
  gpus: readonly GpuInfo[];
  /** CPU slots when there is no GPU. Default 1: Cycles already uses every core. */
  workers?: number;
  /** CPU slots added beside the GPU slots when there are GPUs. Default 0 (see planSlots). */
  cpuSlots?: number;
  /** Cores to share between CPU slots. Default os.availableParallelism() (the cores this process may run on). */
  cpuCount?: number;
  /** Cores of the machine. Default os.cpus().length. */
  machineCores?: number;
  /** RAM a CPU slot's frame may use, bytes. Default undefined: unknown. */
  cpuMemoryBytes?: number;
}

/**
 * Render slots. Rule: with GPUs, one slot per GPU, pinned by UUID (a Cycles process scales poorly
 * across GPUs and one crash then loses one GPU's chunk), plus `cpuSlots` CPU slots (default 0:
 * each GPU render needs a core to feed it, and a CPU render beside it slows it down). Without
 * GPUs, `workers` CPU slots (default 1). When several CPU slots share the machine, each gets an
 * equal share of the cores left after one per GPU slot, as `threads`; so does a worker held to
 * fewer cores than the machine has (taskset, a cgroup cpuset), since Blender would otherwise start
 * a thread per core of the machine.
 */
export function planSlots(opts: PlanSlotsOptions): Slot[] {
  const gpuSlots: Slot[] = opts.gpus.map((g) => ({
    id: `gpu-${g.uuid}`,
    kind: 'gpu',
    gpuUuids: [g.uuid],
    ...(g.memoryMiB > 0 ? { memoryBytes: g.memoryMiB * 2 ** 20 } : {}),
  }));
  const wanted = gpuSlots.length > 0 ? (opts.cpuSlots ?? 0) : (opts.workers ?? 1);
  const nCpu = Math.max(gpuSlots.length > 0 ? 0 : 1, Math.trunc(wanted));
  const cores = Math.max(1, Math.trunc(opts.cpuCount ?? availableParallelism()));
  const shared = nCpu > 1 || (nCpu > 0 && gpuSlots.length > 0) || cores < (opts.machineCores ?? cpus().length);
  const threads = Math.max(1, Math.floor((cores - gpuSlots.length) / Math.max(1, nCpu)));
  const cpuSlots: Slot[] = Array.from({ length: nCpu }, (_, i) => ({
    id: `cpu-${i}`,
    kind: 'cpu',
    gpuUuids: [],
    ...(shared ? { threads } : {}),
    ...(opts.cpuMemoryBytes ? { memoryBytes: opts.cpuMemoryBytes } : {}),
  }));
  return [...gpuSlots, ...cpuSlots];
}

export interface BuildForCapabilities {
  version: BlenderVersion | string;
  capabilities: BuildCapabilities;
  /** The routing note when another version than asked renders (blender/version-routing.ts). */
  note?: string;
}

export interface CapabilitiesOptions {
  /**
   * Count backends without precompiled kernels as usable (the machine has nvcc/hipcc and the
   * first render of each process may compile for minutes). Default false.
   */
  runtimeKernelCompile?: boolean;
}

/**
 * RenderCapabilities for resolveFinalConfig. gpuBackends: backends the build lists AND this
 * machine's GPUs support (every detected GPU is NVIDIA: CUDA, plus OPTIX when listed) AND that
 * have kernels (precompiled, or `runtimeKernelCompile`). gpuCount: the GPUs one render process
 * uses, 1 when some backend is usable (each render slot pins one GPU, planSlots), else 0; the
 * detected GPUs render chunks side by side (parallelGpus), they are not all in one process.
 */
export function capabilitiesFor(
  build: BuildForCapabilities,
  inventory: DeviceInventory,
  opts: CapabilitiesOptions = {},
): RenderCapabilities {
  const caps = build.capabilities;
  const machine: CyclesBackend[] = inventory.gpus.length > 0 ? ['CUDA', 'OPTIX'] : [];
  const gpuBackends = caps.cyclesBackends.filter(
    (b) => machine.includes(b) && (opts.runtimeKernelCompile === true || caps.precompiledKernels.includes(b)),
  );
  return {
    blenderVersion: typeof build.version === 'string' ? build.version : build.version.text,
    ...(build.note ? { buildNote: build.note } : {}),
    hasOpenImageDenoise: caps.hasOpenImageDenoise,
    gpuBackends,
    gpuCount: gpuBackends.length > 0 ? 1 : 0,
    ...(gpuBackends.length > 0 ? { parallelGpus: inventory.gpus.length } : {}),
  };
}
