// Which claimed tasks this worker runs and which it leaves for others: tasks name what they
// need (a Blender version), a worker slot that keeps failing one job's tasks is kept off that job
// for a while (the per-job blocklist of render-farm managers), and a task that just failed on a
// slot is left once for another slot to retry (a frame that crashes one slot's Blender may well
// render on another). What a job's frames need in memory, and the tags it requires, are memory-fit.ts's.
import { totalmem } from 'node:os';
import type { JobRecord } from '../../ports/jobs.js';
import type { FailureLedger, Task } from '../../ports/tasks.js';
import type { MemoryFit, SlotFacts } from './memory-fit.js';
import { buildFor, minorVersion, parseRequestedVersion, type BlenderBuild } from '../../../blender/builds.js';
import { canOpen } from '../../../blender/version-routing.js';
import { TaskRequirements } from '../../domain/tasks.js';

/** What a task needs from the worker that runs it, carried in its payload; none when unreadable. */
export function requirementsOf(task: Task): TaskRequirements {
  const r = TaskRequirements.safeParse(task.payload.requires);
  return r.success ? r.data : {};
}

export interface PlacementOptions {
  /** Failed tasks of one job on one slot before the slot is kept off the job. Default 3. */
  blocklistThreshold?: number;
  /**
   * How long a blocked slot stays off the job before it tries again. Default 600000 ms (10 min):
   * on a farm where every slot is blocked the job still moves on, slowly, instead of hanging.
   */
  blocklistRetryMs?: number;
  /** This machine's memory, bytes. Default os.totalmem(). */
  totalMemoryBytes?: number;
  now?: () => number;
}

export class Placement {
  private readonly threshold: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly memory: number;
  /** When this process first kept a slot off a job: the retry window counts from there. */
  private readonly blockedSince = new Map<string, number>();
  /** Tasks whose last attempt failed on a slot, and whether that slot left the retry to others yet. */
  private readonly failedHere = new Map<string, 'failed' | 'left'>();
  /**
   * Failure counts of a job by slot, read once per job: a slot's count changes only through its own
   * failures (slot names are this machine's), which `failed` writes through. Saves a query per
   * task now that a task is one frame.
   */
  private readonly counts = new Map<string, Promise<Record<string, number>>>();
  /** Slots of this machine kept off a job now, with when and after how many failures (the heartbeat shows them). */
  private readonly blocked = new Map<string, { jobId: string; slot: string; failures: number; since: number }>();

  constructor(
    private readonly deps: {
      queue: FailureLedger;
      builds: readonly BlenderBuild[];
      /** Memory and tag rules (memory-fit.ts). Default none: memory and tags never refuse. */
      fit?: MemoryFit;
    },
    opts: PlacementOptions = {},
  ) {
    this.threshold = opts.blocklistThreshold ?? 3;
    this.retryMs = opts.blocklistRetryMs ?? 600_000;
    this.now = opts.now ?? Date.now;
    this.memory = opts.totalMemoryBytes ?? totalmem();
  }

  /**
   * Why `slot` should leave `task` to another worker, or undefined to run it. With `facts` (the
   * slot's memory, the task's job), a job's measured memory need and required tags count too.
   */
  async refusal(task: Task, slot: string, facts?: SlotFacts & { job?: JobRecord }): Promise<string | undefined> {
    const { blender, opens, minimumRamGiB } = requirementsOf(task);
    if (minimumRamGiB && this.memory < minimumRamGiB * 2 ** 30) {
      return `needs ${minimumRamGiB} GiB of memory; this machine has ${(this.memory / 2 ** 30).toFixed(1)} GiB`;
    }
    if (blender && this.deps.builds.length > 0 && !buildFor(this.deps.builds, blender)) {
      if (facts?.job) await this.deps.fit?.buildNotice(facts.job, { blender });
      return `needs Blender ${blender}; this worker has ${[...new Set(this.deps.builds.map(minorVersion))].join(', ')}`;
    }
    const file = opens ? parseRequestedVersion(opens) : undefined;
    if (file && this.deps.builds.length > 0 && !this.deps.builds.some((b) => canOpen(b.version, file))) {
      if (facts?.job && opens) await this.deps.fit?.buildNotice(facts.job, { opens });
      return (
        `needs a Blender that opens files of ${opens}; this worker has ` +
        `${[...new Set(this.deps.builds.map(minorVersion))].join(', ')}`
      );
    }
    if (this.deps.fit && facts?.job && task.kind === 'render-chunk') {
      const unfit = await this.deps.fit.refusal(facts.job, slot, facts);
      if (unfit) return unfit;
    }
    const here = `${task.id}\n${slot}`;
    if (this.failedHere.get(here) === 'failed') {
      this.failedHere.set(here, 'left');
      return 'its last attempt failed on this slot: left once for another slot';
    }
    const failures = (await this.jobCounts(task.jobId))[slot] ?? 0;
    if (failures < this.threshold) return undefined;
    const key = `${task.jobId}\n${slot}`;
    const since = this.blockedSince.get(key) ?? this.now();
    this.blockedSince.set(key, since);
    if (this.now() - since >= this.retryMs) {
      this.blockedSince.delete(key);
      this.blocked.delete(key);
      return undefined;
    }
    this.noteBlocked(task.jobId, slot, failures);
    return `blocklisted on this job after ${failures} failed tasks`;
  }

  /** Counts the job's memory need against the machine while `slot` runs it; call the answer when it ends. */
  hold(task: Task, slot: string, facts: SlotFacts & { job: JobRecord }): () => void {
    return this.deps.fit && task.kind === 'render-chunk' ? this.deps.fit.hold(facts.job, slot, facts) : () => undefined;
  }

  /** Counts a failed task of the job against the slot, and remembers it for the task's retry. */
  async failed(task: Task, slot: string): Promise<number> {
    this.failedHere.set(`${task.id}\n${slot}`, 'failed');
    // Bounded: a worker running for months forgets the oldest.
    if (this.failedHere.size > 10_000) this.failedHere.delete(this.failedHere.keys().next().value!);
    const n = await this.deps.queue.recordFailure(task.jobId, slot);
    (await this.jobCounts(task.jobId))[slot] = n;
    if (n >= this.threshold) this.noteBlocked(task.jobId, slot, n);
    return n;
  }

  /** Jobs whose blocklist keeps slots of this machine off them now (within the retry window). */
  blocklistedBy(): { jobId: string; slots: string[]; failures: number }[] {
    const byJob = new Map<string, { jobId: string; slots: string[]; failures: number }>();
    for (const [key, b] of this.blocked) {
      if (this.now() - b.since >= this.retryMs) {
        this.blocked.delete(key);
        continue;
      }
      const j = byJob.get(b.jobId) ?? { jobId: b.jobId, slots: [], failures: 0 };
      j.slots.push(b.slot);
      j.failures += b.failures;
      byJob.set(b.jobId, j);
    }
    return [...byJob.values()];
  }

  private noteBlocked(jobId: string, slot: string, failures: number): void {
    const key = `${jobId}\n${slot}`;
    const since = this.blocked.get(key)?.since ?? this.now();
    this.blocked.set(key, { jobId, slot, failures, since });
  }

  private jobCounts(jobId: string): Promise<Record<string, number>> {
    let c = this.counts.get(jobId);
    if (!c) {
      c = this.deps.queue.jobFailures(jobId);
      c.catch(() => this.counts.delete(jobId));
      this.counts.set(jobId, c);
      if (this.counts.size > 1000) this.counts.delete(this.counts.keys().next().value!);
    }
    return c;
  }
}
