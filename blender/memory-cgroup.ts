// The memory cgroup a worker runs in (cgroup v2, or v1's memory controller): its limit is the
// machine's memory as far as Blender is concerned (a container or a systemd slice gives less than
// the host has), its OOM-kill counter tells an out-of-memory kill from any other SIGKILL, and a
// child group per render slot holds a slot to the memory the operator gave it (--slot-memory), so
// that its Blender, not the worker, is what the kernel kills when a frame needs more.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  version: 1 | 2;
  /** The group's folder. */
  dir: string;
}

export interface CgroupRoots {
  /** Default `/proc/self/cgroup`. */
  procSelf?: string;
  /** Where the hierarchies are mounted. Default `/sys/fs/cgroup`. */
  mount?: string;
}

/** No limit: v1 writes "no limit" as a huge number rounded to the page size. */
const NO_LIMIT = 2 ** 60;

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** The memory cgroup of this process, or undefined where there is none to read (not Linux, no controller). */
export function ownMemoryCgroup(roots: CgroupRoots = {}): MemoryCgroup | undefined {
  const mount = roots.mount ?? '/sys/fs/cgroup';
  const text = read(roots.procSelf ?? '/proc/self/cgroup');
  if (!text) return undefined;
  for (const line of text.split('\n')) {
    const [, controllers, rel] = /^\d+:([^:]*):(.*)$/.exec(line.trim()) ?? [];
    if (rel === undefined) continue;
    if (controllers!.split(',').includes('memory')) {
      const dir = path.join(mount, 'memory', rel);
      if (existsSync(path.join(dir, 'memory.limit_in_bytes'))) return { version: 1, dir };
    }
  }
  const v2 = /^0::(.*)$/m.exec(text)?.[1];
  if (v2 !== undefined) {
    // The unified hierarchy is at the mount itself, or beside v1's at `unified` on hybrid machines.
    for (const base of [mount, path.join(mount, 'unified')]) {
      const dir = path.join(base, v2.trim());
      if (existsSync(path.join(dir, 'memory.max'))) return { version: 2, dir };
    }
  }
  return undefined;
}

/** The group's memory limit in bytes, or undefined when it has none. */
export function memoryLimit(group: MemoryCgroup): number | undefined {
  const raw = read(path.join(group.dir, group.version === 2 ? 'memory.max' : 'memory.limit_in_bytes'))?.trim();
  if (!raw || raw === 'max') return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n > 0 && n < NO_LIMIT ? n : undefined;
}

/** Processes of the group the kernel killed for memory so far (0 where the kernel does not count them). */
export function oomKills(group: MemoryCgroup): number {
  const text = read(path.join(group.dir, group.version === 2 ? 'memory.events' : 'memory.oom_control')) ?? '';
  return Number(/^oom_kill\s+(\d+)/m.exec(text)?.[1] ?? 0);
}

/** A render slot's own group: Blender joins it through `procs` before it execs. */
export interface SlotCgroup extends MemoryCgroup {
  /** The file a process writes its pid to, to join (cgroup.procs). */
  procs: string;
  limitBytes: number;
  /** Removes the group (empty once its Blenders ended); never throws. */
  remove(): void;
}

/**
 * Makes `name` under `parent` with `limitBytes` of memory. Throws with the kernel's reason where
 * the group cannot be made (not root, a read-only cgroupfs, v2 without the memory controller
 * delegated): the caller says so and runs the slot without it.
 */
export function createSlotCgroup(parent: MemoryCgroup, name: string, limitBytes: number): SlotCgroup {
  const dir = path.join(parent.dir, name);
  // Not recursive: the parent group exists, and Node's recursive mkdir spins forever where a
  // missing parent answers ENOENT to its own mkdir (as /proc does). A leftover group is reused.
  try {
    mkdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  try {
    writeFileSync(path.join(dir, parent.version === 2 ? 'memory.max' : 'memory.limit_in_bytes'), String(limitBytes));
    // v2 would otherwise let the slot spill into swap, where a frame crawls instead of failing.
    if (parent.version === 2 && existsSync(path.join(dir, 'memory.swap.max')))
      writeFileSync(path.join(dir, 'memory.swap.max'), '0');
  } catch (err) {
    try {
      rmdirSync(dir);
    } catch {
      // left for the operator
    }
    throw err;
  }
  return {
    version: parent.version,
    dir,
    procs: path.join(dir, 'cgroup.procs'),
    limitBytes,
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // Still holds a Blender on its way out: the next worker start reuses the name.
      }
    },
  };
}
