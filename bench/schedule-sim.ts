// A farm of simulated slots on a simulated clock, driving a real task queue adapter the way the
// worker runtime's claim loop does: a free slot claims, runs the task's frames for their given
// time, completes it and claims again. Time jumps from one frame end to the next, so ten farm
// minutes take seconds, and the queue measures slot time on the same clock (its `now`).
import type { TaskQueue } from '../service/ports/tasks.js';

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
  taskId: string | null;
  jobId: string;
  start: number;
  end: number;
}

export interface FarmResult {
  /** Slot seconds each workspace used within the run. */
  slotSeconds: Record<string, number>;
  /** When each job's first task started (ms since SIM_T0). */
  firstStart: Record<string, number>;
  claims: number;
}

export interface FarmOptions {
  slots: number;
  /** Simulated seconds to run. */
  seconds: number;
  /** Something to do at a simulated time (submit a job into the full farm); returns the jobs it added. */
  at?: { second: number; run: () => Promise<Record<string, SimJob>> };
}

const KINDS = ['render-chunk'] as const;
/** Leases far beyond the run: no task comes back for a lapsed lease. */
const LEASE_MS = 3_600_000;

export async function runFarm(
  queue: TaskQueue,
  clock: SimClock,
  jobs: Map<string, SimJob>,
  o: FarmOptions,
): Promise<FarmResult> {
  const endAt = SIM_T0 + o.seconds * 1000;
  const slotSeconds: Record<string, number> = {};
  const firstStart: Record<string, number> = {};
  let claims = 0;
  let pending = o.at;
  const charge = (s: Slot, until: number) => {
    const ws = jobs.get(s.jobId)!.workspace;
    slotSeconds[ws] = (slotSeconds[ws] ?? 0) + (until - s.start) / 1000;
  };
  const claimFor = async (s: Slot, name: string) => {
    const task = await queue.claim(name, KINDS, LEASE_MS);
    s.taskId = task?.id ?? null;
    if (!task) return;
    claims++;
    const job = jobs.get(task.jobId);
    if (!job) throw new Error(`the farm claimed a task of an unknown job ${task.jobId}`);
    const frames = (task.payload.frames as number[] | undefined)?.length ?? 1;
    s.jobId = task.jobId;
    s.start = clock.t;
    s.end = clock.t + frames * job.frameSeconds * 1000;
    firstStart[task.jobId] ??= clock.t - SIM_T0;
  };
  const slots: Slot[] = Array.from({ length: o.slots }, () => ({ taskId: null, jobId: '', start: 0, end: 0 }));
  for (const [i, s] of slots.entries()) await claimFor(s, `sim/slot${i}`);
  for (;;) {
    let next: { s: Slot; i: number } | undefined;
    for (const [i, s] of slots.entries()) if (s.taskId && (!next || s.end < next.s.end)) next = { s, i };
    if (pending && (!next || next.s.end > SIM_T0 + pending.second * 1000)) {
      clock.t = SIM_T0 + pending.second * 1000;
      for (const [id, job] of Object.entries(await pending.run())) jobs.set(id, job);
      pending = undefined;
      // Slots idle for want of work take what was just submitted.
      for (const [i, s] of slots.entries()) if (!s.taskId) await claimFor(s, `sim/slot${i}`);
      continue;
    }
    if (!next || next.s.end > endAt) break;
    clock.t = next.s.end;
    await queue.complete(next.s.taskId!, `sim/slot${next.i}`);
    charge(next.s, clock.t);
    await claimFor(next.s, `sim/slot${next.i}`);
  }
  for (const s of slots) if (s.taskId) charge(s, endAt);
  return { slotSeconds, firstStart, claims };
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
