// The memory of this worker's render slots: the machine's (its cgroup's limit, else the RAM), a CPU
// slot's (--slot-memory, else the machine's), each CPU slot's own memory cgroup where the operator
// gave a size and the worker may make one, and the OOM kills counted where a slot's Blender runs.
import { totalmem } from 'node:os';
import type { Logger } from 'pino';
import {
  createSlotCgroup,
  memoryLimit,
  oomKills,
  ownMemoryCgroup,
  type MemoryCgroup,
  type SlotCgroup,
} from '../../../blender/memory-cgroup.js';
import type { Slot } from './devices.js';
import type { Lane } from './runtime.js';

/** The machine's memory as this process sees it: the lower of the RAM and its cgroup's limit. */
export function machineMemoryBytes(own: MemoryCgroup | undefined = ownMemoryCgroup()): number {
  const limit = own ? memoryLimit(own) : undefined;
  return Math.min(totalmem(), limit ?? Infinity);
}

export interface SlotMemory {
  /** The machine's memory, bytes. */
  machineBytes: number;
  /** OOM kills counted so far in the lane's cgroup (its own, else the worker's); 0 where none is readable. */
  oomKills(lane: Lane): number;
  /** Removes the slots' cgroups (worker stop). */
  remove(): void;
}

/**
 * Gives each CPU slot of `slots` its own memory cgroup of `slotBytes` (sets memoryCgroupProcs),
 * where `slotBytes` is set and a cgroup can be made; logs why not otherwise (the slot then runs
 * with the machine's memory as its limit, and placement still counts `slotBytes`).
 */
export function slotMemory(
  slots: Slot[],
  opts: { slotBytes: number | undefined; name: string; log: Logger; own?: MemoryCgroup | undefined },
): SlotMemory {
  const own = 'own' in opts ? opts.own : ownMemoryCgroup();
  const groups = new Map<string, SlotCgroup>();
  if (opts.slotBytes !== undefined) {
    for (const slot of slots.filter((s) => s.kind === 'cpu')) {
      if (!own) {
        opts.log.warn(
          'no memory cgroup to hold render slots to --slot-memory: placement counts it, nothing enforces it',
        );
        break;
      }
      const name = `renderbridge-${opts.name}-${process.pid}-${slot.id}`.replace(/[^\w.-]/g, '_');
      try {
        const group = createSlotCgroup(own, name, opts.slotBytes);
        groups.set(slot.id, group);
        slot.memoryCgroupProcs = group.procs;
      } catch (err) {
        opts.log.warn(
          { err: (err as Error).message, slot: slot.id },
          'cannot make a memory cgroup for the slot (the worker needs root, or a delegated cgroup): ' +
            '--slot-memory is counted by placement but not enforced',
        );
        break;
      }
    }
  }
  return {
    machineBytes: machineMemoryBytes(own),
    oomKills: (lane) => {
      const group = lane.slot ? groups.get(lane.slot.id) : undefined;
      const where = group ?? own;
      return where ? oomKills(where) : 0;
    },
    remove: () => {
      for (const g of groups.values()) g.remove();
    },
  };
}
