// Whether a render slot of this worker can take a job's next frame: the job's measured memory need
// (service/domain/job-memory.ts) against the slot's memory, the memory the machine's other slots
// hold now where they share its RAM, and the tags the job requires against this worker's. A slot
// that cannot leaves the frame to one that can (placement.ts hands it back).
import type { JobRecord } from '../../ports/jobs.js';
import { gib, memoryNeed } from '../../domain/job-memory.js';
import { requiredTagsOf } from '../../domain/worker-tags.js';
import { isBuildNotice, noBuildReason, type BuildNeeds } from '../../domain/build-placement.js';
import type { BlenderVersion } from '../../../blender/version.js';

/** What the placement knows of the slot it asks for. */
export interface SlotFacts {
  /** The slot's memory, bytes (Slot.memoryBytes); undefined: unknown, never refused on memory. */
  memoryBytes?: number;
  /** CPU slots share the machine's RAM; a GPU slot's frame lives in its own VRAM. */
  kind?: 'cpu' | 'gpu';
}

/** A live render slot of the farm, as the registry shows it. */
export interface FarmSlot {
  memoryBytes?: number;
  tags: readonly string[];
  /** Its worker's Blender builds. Absent: unknown (a build notice then names none). */
  builds?: readonly BlenderVersion[];
}

export interface MemoryFitOptions {
  /** The machine's memory shared by its CPU slots, bytes (the worker's cgroup limit, else the RAM). */
  machineMemoryBytes: number;
  /** This worker's tags. Default none. */
  tags?: readonly string[];
  /**
   * The farm's live render slots, this worker's included. Default none: only a proven need (a frame
   * killed for memory) refuses, since without the farm a bigger slot may not exist.
   */
  farmSlots?: () => Promise<FarmSlot[]>;
  /** How long one read of the farm serves placements, ms (0: none). Default 2000: a registry read a frame is waste. */
  farmCacheMs?: number;
  /**
   * Writes the job's placement notice (Job.placement): why no live worker can take its frames, or
   * null once one does. Default none: nothing is written.
   */
  notice?: (jobId: string, reason: string | null) => Promise<void>;
  now?: () => number;
}

export class MemoryFit {
  private readonly tags: ReadonlySet<string>;
  private readonly held = new Map<string, number[]>();
  private farm: { at: number; slots: Promise<FarmSlot[]> } | undefined;

  constructor(private readonly opts: MemoryFitOptions) {
    this.tags = new Set(opts.tags ?? []);
  }

  /**
   * Why `slot` should not take the job's next frame, or undefined. A refusal checks whether any live
   * worker could take it, and says on the job when none can; a frame taken clears that.
   */
  async refusal(job: JobRecord, slot: string, facts: SlotFacts): Promise<string | undefined> {
    const refused = await this.slotRefusal(job, slot, facts);
    const notice = refused ? await this.nobodyCan(job) : null;
    if (notice !== undefined && (notice ?? null) !== (job.job.placement?.reason ?? null)) {
      await this.opts.notice?.(job.job.id, notice).catch(() => undefined);
    }
    return refused;
  }

  /**
   * Where a slot leaves a task for want of a Blender build (placement.ts): says on the job when no
   * live worker has one, and clears such a notice once one has.
   */
  async buildNotice(job: JobRecord, needs: BuildNeeds): Promise<void> {
    const farm = await this.farmSlots();
    if (!farm || farm.some((s) => s.builds === undefined)) return;
    const reason = noBuildReason(farm, requiredTagsOf(job), needs);
    const now = job.job.placement?.reason;
    if (reason === null ? isBuildNotice(now) : reason !== now) {
      await this.opts.notice?.(job.job.id, reason).catch(() => undefined);
    }
  }

  /** Why no live slot of the farm can take the job's frames; null when one can, undefined when the farm is unknown. */
  async nobodyCan(job: JobRecord): Promise<string | null | undefined> {
    const farm = await this.farmSlots();
    if (!farm) return undefined;
    const required = requiredTagsOf(job);
    const lacking = required.filter((t) => !farm.some((s) => s.tags.includes(t)));
    if (lacking.length > 0) return `no live worker has tag ${lacking.join(', ')}`;
    const tagged = farm.filter((s) => required.every((t) => s.tags.includes(t)));
    if (tagged.length === 0) return `no live worker has all of the tags ${required.join(', ')}`;
    const need = memoryNeed(job.internal.memory);
    if (need?.proven && !tagged.some((s) => (s.memoryBytes ?? 0) >= need.bytes)) {
      return `no live slot has more than the ${gib(need.bytes - 1)} of memory a frame ran out of`;
    }
    return null;
  }

  private async slotRefusal(job: JobRecord, slot: string, facts: SlotFacts): Promise<string | undefined> {
    const missing = requiredTagsOf(job).filter((t) => !this.tags.has(t));
    if (missing.length > 0) return `needs worker tag ${missing.join(', ')}; this worker has ${this.tagList()}`;
    const need = memoryNeed(job.internal.memory);
    if (!need) return undefined;
    const have = facts.memoryBytes;
    if (have !== undefined && have < need.bytes) {
      if (need.proven) {
        return `a frame of this job ran out of memory in a slot of ${gib(need.bytes - 1)}; this slot has ${gib(have)}`;
      }
      // Only an estimate: run it anyway where no live slot is bigger (a frame that then dies for
      // memory proves the need, and OUT_OF_MEMORY says so).
      if (await this.biggerSlotLive(need.bytes, requiredTagsOf(job))) {
        return `its frames need about ${gib(need.bytes)} (peak plus margin); this slot has ${gib(have)}`;
      }
    }
    if (facts.kind === 'cpu') {
      const others = [...this.held].filter(([s]) => s !== slot).reduce((sum, [, b]) => sum + Math.max(...b), 0);
      if (others > 0 && others + need.bytes > this.opts.machineMemoryBytes) {
        return (
          `its frames need about ${gib(need.bytes)}; this machine's other slots hold ${gib(others)} of its ` +
          `${gib(this.opts.machineMemoryBytes)} now`
        );
      }
    }
    return undefined;
  }

  /** Counts the job's need against the machine while `slot` runs its frame; call the answer when it ends. */
  hold(job: JobRecord, slot: string, facts: SlotFacts): () => void {
    const bytes = memoryNeed(job.internal.memory)?.bytes;
    if (facts.kind !== 'cpu' || !bytes) return () => undefined;
    const list = this.held.get(slot) ?? [];
    list.push(bytes);
    this.held.set(slot, list);
    return () => {
      const i = list.indexOf(bytes);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0 && this.held.get(slot) === list) this.held.delete(slot);
    };
  }

  /** The largest live slot of the farm (this worker's included), bytes; undefined where the farm is not known. */
  async largestSlot(own: readonly (number | undefined)[]): Promise<number | undefined> {
    const farm = await this.farmSlots();
    const all = [...own, ...(farm ?? []).map((s) => s.memoryBytes)].filter((m): m is number => m !== undefined);
    return farm === undefined && all.length === 0 ? undefined : Math.max(0, ...all);
  }

  /** Whether the farm is known, for callers that must tell "no bigger slot" from "cannot tell". */
  get knowsFarm(): boolean {
    return this.opts.farmSlots !== undefined;
  }

  /** Whether a live slot that may take the job (its tags) holds `bytes`. */
  private async biggerSlotLive(bytes: number, required: readonly string[]): Promise<boolean> {
    const farm = await this.farmSlots();
    return (farm ?? []).some((s) => (s.memoryBytes ?? 0) >= bytes && required.every((t) => s.tags.includes(t)));
  }

  private async farmSlots(): Promise<FarmSlot[] | undefined> {
    if (!this.opts.farmSlots) return undefined;
    const now = (this.opts.now ?? Date.now)();
    // >=, so that 0 really reads the farm every time, even twice in one millisecond.
    if (!this.farm || now - this.farm.at >= (this.opts.farmCacheMs ?? 2000)) {
      const slots = this.opts.farmSlots();
      slots.catch(() => (this.farm = undefined));
      this.farm = { at: now, slots };
    }
    return this.farm.slots.catch(() => undefined);
  }

  private tagList(): string {
    return this.tags.size > 0 ? [...this.tags].join(', ') : 'no tags';
  }
}
