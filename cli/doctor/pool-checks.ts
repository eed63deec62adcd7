// What `renderbridge doctor` says of this machine's place in the farm's pools: the memory its render
// slots get (the machine's, its cgroup's limit, or --slot-memory, and whether a memory cgroup per
// slot can hold them to it), and its worker tags.
import { totalmem } from 'node:os';
import { parseTags } from '../../service/domain/worker-tags.js';
import { createSlotCgroup, memoryLimit, ownMemoryCgroup, type MemoryCgroup } from '../../blender/memory-cgroup.js';
import { fail, ok, reason, warn, type CheckResult } from './check.js';

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/** Slot memory: what a CPU slot's frame may use, and whether --slot-memory can be enforced here. */
export function memoryCheck(
  slotMemoryBytes: number | undefined,
  // null: none (an explicit undefined would read this process's own group through the default).
  own: MemoryCgroup | null = ownMemoryCgroup() ?? null,
) {
  const limit = own ? memoryLimit(own) : undefined;
  const machine = Math.min(totalmem(), limit ?? Infinity);
  const where = limit !== undefined && limit < totalmem() ? "this process's cgroup limit" : 'the RAM';
  if (slotMemoryBytes === undefined)
    return ok('memory', `${gib(machine)} for render slots (${where}); a GPU slot has its GPU's memory`);
  if (slotMemoryBytes > machine)
    return warn(
      'memory',
      `--slot-memory ${gib(slotMemoryBytes)} is more than the ${gib(machine)} this machine has (${where})`,
      'Lower --slot-memory to what a slot really has: frames placed on it by that figure would be killed.',
    );
  if (!own)
    return warn(
      'memory',
      `--slot-memory ${gib(slotMemoryBytes)} per CPU slot, but no memory cgroup holds the slots to it`,
      'Run the worker in a memory cgroup (v1 memory controller, or v2 with memory delegated) to enforce it.',
    );
  try {
    createSlotCgroup(own, `renderbridge-doctor-${process.pid}`, slotMemoryBytes).remove();
    return ok('memory', `--slot-memory ${gib(slotMemoryBytes)} per CPU slot, each held to it by a memory cgroup`);
  } catch (err) {
    return warn(
      'memory',
      `--slot-memory ${gib(slotMemoryBytes)} per CPU slot, counted but not enforced: ${reason(err)}`,
      'Run the worker as root, or delegate a memory cgroup to it (systemd: Delegate=memory).',
    );
  }
}

/** The worker's tags, as placement will match them against renders' requiredTags. */
export function tagsCheck(tags: readonly string[]): CheckResult {
  try {
    const parsed = parseTags(tags);
    return ok('tags', parsed.length ? parsed.join(', ') : 'none: renders that require tags go to other workers');
  } catch (err) {
    return fail('tags', reason(err), 'Fix the tag: the worker refuses to start with it.');
  }
}
