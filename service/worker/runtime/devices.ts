// What this machine and each Blender build can render with: NVIDIA GPUs (nvidia-smi), the Cycles
// backends and denoiser compiled into a build (asked inside Blender, through blender/run.ts), the
// render slots the worker runs, and the RenderCapabilities that resolveFinalConfig corrects a
// request against. Only NVIDIA GPUs are detected; an AMD card (HIP) is never planned for.
import { execFile } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import type { RenderCapabilities } from '../../domain/final-config.js';
import { runBlender } from '../../../blender/run.js';
import type { BlenderVersion } from '../../../blender/version.js';
import { PerBinaryCache } from '../../../blender/binary-cache.js';
import { RetryableTaskError } from './outcomes.js';

export interface GpuInfo {
  /** nvidia-smi's index (changes with PCI order; use the UUID to pin). */
  index: number;
  /** `GPU-…`, what CUDA_VISIBLE_DEVICES accepts regardless of device order. */
  uuid: string;
  name: string;
  memoryMiB: number;
}

export interface DeviceInventory {
  gpus: readonly GpuInfo[];
  /** Why no GPU was found (nvidia-smi missing or failing), for the worker's log. */
  note?: string;
}

/**
 * Parses `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits`. Bad lines are skipped.
 */
export function parseNvidiaSmiCsv(text: string): GpuInfo[] {
  const gpus: GpuInfo[] = [];
  for (const line of text.split(/\r?\n/)) {
    const parts = line.split(',').map((p) => p.trim());
    if (parts.length < 4) continue;
    // A name may hold commas: it is everything between the UUID and the last field.
    const index = Number(parts[0]);
    const uuid = parts[1]!;
    const memory = Number(parts[parts.length - 1]);
    const name = parts.slice(2, -1).join(', ');
    if (!Number.isInteger(index) || !uuid.startsWith('GPU-')) continue;
    gpus.push({ index, uuid, name, memoryMiB: Number.isFinite(memory) ? memory : 0 });
  }
  return gpus;
}

export interface DetectGpusOptions {
  /** nvidia-smi executable. Default `nvidia-smi` from PATH. */
  nvidiaSmi?: string;
  /** Stops the query (the result is then no GPU). */
  signal?: AbortSignal;
  /** Limit for nvidia-smi, which hangs when the driver does. Default 15000 ms. */
  timeoutMs?: number;
}

/** The GPUs nvidia-smi lists, or none with a `note` saying why. Never throws. */
export function detectGpuInventory(opts: DetectGpusOptions = {}): Promise<DeviceInventory> {
  const bin = opts.nvidiaSmi ?? 'nvidia-smi';
  const args = ['--query-gpu=index,uuid,name,memory.total', '--format=csv,noheader,nounits'];
  return new Promise((resolve) => {
    try {
      execFile(
        bin,
        args,
        { timeout: opts.timeoutMs ?? 15_000, signal: opts.signal, maxBuffer: 1 << 20 },
        (err, stdout, stderr) => {
          if (err) {
            const e = err as NodeJS.ErrnoException & { killed?: boolean };
            const why =
              e.code === 'ENOENT'
                ? `${bin} not found`
                : e.killed
                  ? `${bin} did not answer`
                  : `${bin} failed: ${
                      String(stderr || stdout || e.message)
                        .trim()
                        .split('\n')[0]
                    }`;
            resolve({ gpus: [], note: why });
            return;
          }
          const gpus = parseNvidiaSmiCsv(String(stdout));
          resolve(gpus.length > 0 ? { gpus } : { gpus, note: `${bin} lists no GPU` });
        },
      );
    } catch (err) {
      resolve({ gpus: [], note: `${bin} could not start: ${(err as Error).message}` });
    }
  });
}

/** detectGpuInventory without the note: [] when there is no GPU or no nvidia-smi. */
export async function detectGpus(opts: DetectGpusOptions = {}): Promise<GpuInfo[]> {
  return [...(await detectGpuInventory(opts)).gpus];
}

export type CyclesBackend = 'CUDA' | 'OPTIX' | 'HIP' | 'METAL' | 'ONEAPI';
const BACKENDS: readonly CyclesBackend[] = ['CUDA', 'OPTIX', 'HIP', 'METAL', 'ONEAPI'];

export interface BuildCapabilities {
  /** Cycles can use OpenImageDenoise (Debian's 3.4: no). */
  hasOpenImageDenoise: boolean;
  /** GPU backends in the Cycles preferences' compute_device_type (Debian's 3.4: CUDA, HIP). */
  cyclesBackends: CyclesBackend[];
  /**
   * Backends with kernels shipped in cycles/lib (official builds). Without them CUDA/HIP compile
   * kernels at run time (nvcc/hipcc needed, minutes per process); Debian ships none.
   */
  precompiledKernels: CyclesBackend[];
}

/**
 * Runs inside Blender; one JSON line. Kernel file names: kernel_sm_86.cubin(.zst), kernel_optix.ptx(.zst),
 * kernel_gfx1030.fatbin(.zst).
 */
const PROBE_EXPR = `
import bpy, json, os
c = {'oidn': bool(getattr(bpy.app.build_options, 'openimagedenoise', False)), 'backends': [], 'kernels': []}
try:
    import _cycles
    c['oidn'] = c['oidn'] or bool(getattr(_cycles, 'with_openimagedenoise', False))
    import cycles
    lib = os.path.join(os.path.dirname(cycles.__file__), 'lib')
    c['kernels'] = sorted(os.listdir(lib)) if os.path.isdir(lib) else []
    p = bpy.context.preferences.addons['cycles'].preferences
    c['backends'] = [t[0] for t in p.get_device_types(bpy.context)]
except Exception as e:
    c['error'] = repr(e)
print('RB_CAPS ' + json.dumps(c), flush=True)
`;

/** Reads the probe's `RB_CAPS {json}` line; undefined when absent or malformed. */
export function parseCapabilitiesLine(lines: readonly string[]): BuildCapabilities | undefined {
  const line = lines.find((l) => l.startsWith('RB_CAPS '));
  if (!line) return undefined;
  let raw: { oidn?: unknown; backends?: unknown; kernels?: unknown };
  try {
    raw = JSON.parse(line.slice('RB_CAPS '.length)) as typeof raw;
  } catch {
    return undefined;
  }
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const kernels = list(raw.kernels);
  const has = (re: RegExp) => kernels.some((k) => re.test(k));
  const precompiled: CyclesBackend[] = [];
  if (has(/^kernel_(sm_\d+\.cubin|compute_\d+\.ptx)/)) precompiled.push('CUDA');
  if (has(/^kernel_optix/)) precompiled.push('OPTIX');
  if (has(/^kernel_gfx/)) precompiled.push('HIP');
  return {
    hasOpenImageDenoise: raw.oidn === true,
    cyclesBackends: BACKENDS.filter((b) => list(raw.backends).includes(b)),
    precompiledKernels: precompiled,
  };
}

async function runProbe(binary: string): Promise<BuildCapabilities> {
  const res = await runBlender({
    binary,
    args: ['--python-expr', PROBE_EXPR],
    timeoutMs: 120_000,
    lastLinesCount: 200,
    access: { write: [], read: [] },
  });
  const caps = parseCapabilitiesLine(res.lastLines);
  if (res.exitCode !== 0 || !caps) {
    throw new RetryableTaskError(`cannot read the capabilities of ${binary}`, {
      exitCode: res.exitCode,
      lastLines: res.lastLines.slice(-20),
    });
  }
  return caps;
}

/** Probed capabilities per binary (see PerBinaryCache); create one per worker. */
export class BuildCapabilitiesCache extends PerBinaryCache<BuildCapabilities> {
  constructor() {
    super((binary) => runProbe(binary));
  }
}

/**
 * Asks `binary` (one Blender start, ~1 s) what it can do; pass the worker's cache to ask
 * once. Throws RetryableTaskError.
 */
export function probeBuildCapabilities(binary = 'blender', cache?: BuildCapabilitiesCache): Promise<BuildCapabilities> {
  return cache ? cache.get(binary) : runProbe(binary);
}

/** One Blender process at a time runs in a slot. */
export interface Slot {
  /** `gpu-<uuid>` or `cpu-<n>`. */
  id: string;
  kind: 'gpu' | 'cpu';
  /** GPUs the slot's Blender may see (CUDA_VISIBLE_DEVICES); empty for CPU slots. */
  gpuUuids: string[];
  /** Render threads (`-t`) for CPU slots sharing the cores; undefined = all cores. */
  threads?: number;
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
  const gpuSlots: Slot[] = opts.gpus.map((g) => ({ id: `gpu-${g.uuid}`, kind: 'gpu', gpuUuids: [g.uuid] }));
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
