// What this machine and each Blender build can render with: NVIDIA GPUs (nvidia-smi) and the
// Cycles backends and denoiser compiled into a build (asked inside Blender, through run.ts). The
// worker plans its slots and capabilities from them (service/worker/runtime/devices.ts);
// `renderbridge doctor` reports them. Only NVIDIA GPUs are detected; an AMD card (HIP) is never
// planned for.
import { execFile } from 'node:child_process';
import { PerBinaryCache } from './binary-cache.js';
import { BlenderResultError } from './errors.js';
import { runBlender } from './run.js';

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
    throw new BlenderResultError(`cannot read the capabilities of ${binary}`, {
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
 * once. Throws BlenderResultError (the worker retries the task: asTaskOutcome).
 */
export function probeBuildCapabilities(binary = 'blender', cache?: BuildCapabilitiesCache): Promise<BuildCapabilities> {
  return cache ? cache.get(binary) : runProbe(binary);
}
