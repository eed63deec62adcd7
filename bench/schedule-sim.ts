// A farm of simulated slots on a simulated clock, driving a real task queue adapter the way the
// worker runtime's claim loop does: a free slot claims, runs the task's frames for their given
// time, completes it and claims again. Time jumps from one frame end to the next, so ten farm
// minutes take seconds, and the queue measures slot time on the same clock (its `now`).
import type { Task, TaskKind, TaskQueue } from '../service/ports/tasks.js';

/** Epoch ms the simulated clock starts at. */
export const SIM_T0 = Date.UTC(2026, 0, 1);

/** The clock the adapters are opened with; the farm moves it. */
export class SimClock {
  t = SIM_T0;
  readonly now = (): number => this.t;
}

/** What the farm knows of a job: its fair-share workspace and each frame's render time. */
export interface SimJob {
  workspace: string;
  frameSeconds: number;
}

interface Slot {
  task: Task | null;
  start: number;
  end: number;
}

const KINDS: readonly TaskKind[] = ['render-chunk'];

export interface FarmResult {
  /** Slot seconds each workspace used within the run. */
  slotSeconds: Record<string, number>;
  /** When each job's first task started (ms since SIM_T0). */
  firstStart: Record<string, number>;
  /** When each task ended (ms since SIM_T0), in the order they ended. */
  finished: { task: Task; at: number }[];
  /** Claims that found nothing while `runnable` said a task was waiting (ms since SIM_T0). */
  idleWhileRunnable: number[];
  claims: number;
}

export interface FarmOptions {
  slots: number;
  /** Simulated seconds to run. */
  seconds: number;
  /** Things to do at simulated times (submit a job into the full farm); each returns the jobs it added. */
  at?: readonly { second: number; run: () => Promise<Record<string, SimJob>> }[];
  /** Kinds the slots claim. Default render-chunk. */
  kinds?: readonly TaskKind[];
  /** Seconds a task takes. Default: its frames times its job's frameSeconds (one frame without frames). */
  taskSeconds?: (task: Task, job: SimJob) => number;
  /** Told as each task ends, before idle slots claim again (it may enqueue: a job's next step). */
  onDone?: (task: Task, at: number) => Promise<void>;
  /**
   * How many tasks are claimable now by the caller's bookkeeping; a claim that finds none while this
   * is above 0 is recorded (idleWhileRunnable). Default: not checked.
   */
  runnable?: () => number;
  /** Told as each task is claimed. */
  onClaim?: (task: Task) => void;
}

/** Leases far beyond the run: no task comes back for a lapsed lease. */
const LEASE_MS = 3_600_000;

export async function runFarm(
  queue: TaskQueue,
  clock: SimClock,
  jobs: Map<string, SimJob>,
  o: FarmOptions,
): Promise<FarmResult> {
  const kinds = o.kinds ?? KINDS;
  const endAt = SIM_T0 + o.seconds * 1000;
  const slotSeconds: Record<string, number> = {};
  const firstStart: Record<string, number> = {};
  const finished: FarmResult['finished'] = [];
  const idleWhileRunnable: number[] = [];
  let claims = 0;
  const pending = [...(o.at ?? [])].sort((a, b) => a.second - b.second);
  const charge = (s: Slot, until: number) => {
    const ws = jobs.get(s.task!.jobId)!.workspace;
    slotSeconds[ws] = (slotSeconds[ws] ?? 0) + (until - s.start) / 1000;
  };
  const claimFor = async (s: Slot, name: string) => {
    const task = await queue.claim(name, kinds, LEASE_MS);
    s.task = task ?? null;
    if (!task) {
      if ((o.runnable?.() ?? 0) > 0) idleWhileRunnable.push(clock.t - SIM_T0);
      return;
    }
    claims++;
    o.onClaim?.(task);
    const job = jobs.get(task.jobId);
    if (!job) throw new Error(`the farm claimed a task of an unknown job ${task.jobId}`);
    const frames = (task.payload.frames as number[] | undefined)?.length ?? 1;
    s.start = clock.t;
    s.end = clock.t + (o.taskSeconds ? o.taskSeconds(task, job) : frames * job.frameSeconds) * 1000;
    firstStart[task.jobId] ??= clock.t - SIM_T0;
  };
  // Slots idle for want of work take what a submit or a completion made claimable; the first that
  // finds nothing stops the round (the others would find nothing either).
  const offerIdle = async () => {
    for (const [i, s] of slots.entries()) {
      if (s.task) continue;
      await claimFor(s, `sim/slot${i}`);
      if (!s.task) return;
    }
  };
  const slots: Slot[] = Array.from({ length: o.slots }, () => ({ task: null, start: 0, end: 0 }));
  for (const [i, s] of slots.entries()) await claimFor(s, `sim/slot${i}`);
  for (;;) {
    let next: { s: Slot; i: number } | undefined;
    for (const [i, s] of slots.entries()) if (s.task && (!next || s.end < next.s.end)) next = { s, i };
    const due = pending[0];
    if (due && due.second * 1000 + SIM_T0 <= endAt && (!next || next.s.end > SIM_T0 + due.second * 1000)) {
      pending.shift();
      clock.t = SIM_T0 + due.second * 1000;
      for (const [id, job] of Object.entries(await due.run())) jobs.set(id, job);
      await offerIdle();
      continue;
    }
    if (!next || next.s.end > endAt) break;
    clock.t = next.s.end;
    const task = next.s.task!;
    await queue.complete(task.id, `sim/slot${next.i}`);
    charge(next.s, clock.t);
    finished.push({ task, at: clock.t - SIM_T0 });
    await o.onDone?.(task, clock.t);
    await claimFor(next.s, `sim/slot${next.i}`);
    if (next.s.task) await offerIdle();
  }
  for (const s of slots) if (s.task) charge(s, endAt);
  return { slotSeconds, firstStart, finished, idleWhileRunnable, claims };
}

/** Enqueues `n` one-frame chunks of a job (ids `<jobId>:<i>`). */
export async function submit(
  queue: TaskQueue,
  jobId: string,
  n: number,
  opts: { shareGroup?: string; priority?: number } = {},
): Promise<void> {
  for (let i = 0; i < n; i++)
    await queue.enqueue({ id: `${jobId}:${i}`, jobId, kind: 'render-chunk', payload: { frames: [i + 1] }, ...opts });
}

/** Claims per second of `claimers` concurrent claim-and-complete loops until the queue is empty (real time). */
export async function drainRate(queue: TaskQueue, claimers: number): Promise<{ claims: number; perSecond: number }> {
  let claims = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: claimers }, async (_, i) => {
      for (;;) {
        const t = await queue.claim(`bench/slot${i}`, KINDS, LEASE_MS);
        if (!t) return;
        claims++;
        await queue.complete(t.id, `bench/slot${i}`);
      }
    }),
  );
  return { claims, perSecond: claims / ((performance.now() - t0) / 1000) };
}
