// The device nodes a sandboxed Blender of one GPU slot may open: that GPU's own node and the
// driver's shared control nodes, nothing of the machine's other GPUs. NVIDIA's driver says which
// node (`/dev/nvidiaN`) belongs to which GPU in /proc/driver/nvidia/gpus/<pci id>/information
// ("GPU UUID:" and "Device Minor:" lines). AMD's ROCm has no such map a process can read without its
// tools: a HIP slot gets /dev/kfd and the render nodes, and HIP_VISIBLE_DEVICES picks the GPU.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Shared nodes every CUDA process opens (control, unified memory, modesetting). */
const NVIDIA_SHARED = ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset'];

/** UUID -> minor number of every NVIDIA GPU the driver lists under `procRoot`. */
export function nvidiaMinors(procRoot = '/proc/driver/nvidia/gpus'): Map<string, number> {
  const out = new Map<string, number>();
  let dirs: string[];
  try {
    dirs = readdirSync(procRoot);
  } catch {
    return out;
  }
  for (const d of dirs) {
    let text: string;
    try {
      text = readFileSync(join(procRoot, d, 'information'), 'utf8');
    } catch {
      continue;
    }
    const uuid = /^GPU UUID:\s*(\S+)/m.exec(text)?.[1];
    const minor = /^Device Minor:\s*(\d+)/m.exec(text)?.[1];
    if (uuid && minor !== undefined) out.set(uuid, Number(minor));
  }
  return out;
}

export interface GpuNodeOptions {
  /** Where the driver's per-GPU folders are. Default /proc/driver/nvidia/gpus. */
  procRoot?: string;
  /** The device folder. Default /dev. */
  devRoot?: string;
}

/**
 * The nodes of a slot whose GPUs are `uuids` (NVIDIA UUIDs as nvidia-smi reports them; `HIP` slots
 * by index). Only nodes that exist are listed. A UUID the driver does not list gets no node: the
 * render then finds no GPU (and falls back or fails as a run without one does), never another GPU.
 */
export function gpuNodes(uuids: readonly string[], deviceType: string, opts: GpuNodeOptions = {}): string[] {
  const dev = opts.devRoot ?? '/dev';
  if (uuids.length === 0) return [];
  if (deviceType === 'HIP') {
    const dri = existsSync(join(dev, 'dri'))
      ? readdirSync(join(dev, 'dri'))
          .filter((n) => n.startsWith('renderD'))
          .map((n) => join(dev, 'dri', n))
      : [];
    return [join(dev, 'kfd'), ...dri].filter((n) => existsSync(n));
  }
  const minors = nvidiaMinors(opts.procRoot);
  const own = uuids.flatMap((u) => {
    const minor = minors.get(u);
    return minor === undefined ? [] : [join(dev, `nvidia${minor}`)];
  });
  return [...NVIDIA_SHARED.map((n) => join(dev, n)), ...own].filter((n) => existsSync(n));
}
