// bench:schedule's dependencies row: a chain of 20 jobs, each waiting for the one before, beside a
// background backlog of another workspace that runs out half-way. The chain is submitted at once,
// and its waits are the service's own: each link's planning task is claimed and handed back
// naming the job before it (release's `waitFor`, as the planner's dependency check does,
// service/worker/render/dependency-wait.ts), and the job before's end wakes it (the queue's
// jobEnded, which the job store's end feed calls in the service). Planning then enqueues the job
// previews first with its finalize after its chunks (schedule-plans.ts). Measured: that the links
// ran in order, and that no claim found nothing while a task was claimable (a frame waiting and a
// slot idle).
import { verdict, type Row } from './lib/results.js';
import { SIM_T0, SimClock, runFarm, type SimJob } from './schedule-sim.js';
import { enqueuePlanned, planId } from './schedule-plans.js';
import { openClockedQueue, type ScheduleEngine } from './schedule-engines.js';
import type { Task, TaskQueue } from '../service/ports/tasks.js';
import type { DependencyWakes } from '../service/ports/dependency-waits.js';

const SLOTS = 64;
const LINKS = 20;
const LINK_FRAMES = 60;
const LINK_FRAME_SECONDS = 10;
const CHUNK = 2;
/** Background frames (20 s each): enough to keep every slot busy for the first part of the chain. */
const BACKGROUND_FRAMES = 1500;
const SECONDS = 3600;
const PLAN_SECONDS = 1;
const FINALIZE_SECONDS = 2;

/**
 * The hand-back's delay, beyond the run: only the wake frees a link, so the row measures the wake
 * (the service's 30 s safety poll, DEPENDENCY_SAFETY_POLL_MS, only makes up for a lost one).
 */
const WAIT_DELAY_MS = (SECONDS + 60) * 1000;

const link = (k: number) => `chain-${String(k).padStart(2, '0')}`;

/**
 * The chain's planning tasks as the planner first sees them: each one but the first is handed back
 * waiting for the job before it, the first as it was. Claimed in one pass before the farm starts
 * (the check takes no farm time), so the slots only ever claim a link its wake freed. How many wait.
 */
async function deferChain(queue: TaskQueue): Promise<number> {
  const seen: Task[] = [];
  for (let t; (t = await queue.claim('sim/planner', ['render'], WAIT_DELAY_MS));) seen.push(t);
  for (const t of seen) {
    const k = Number(t.jobId.slice('chain-'.length));
    const waitFor = k > 0 ? { delayMs: WAIT_DELAY_MS, waitFor: [link(k - 1)] } : {};
    await queue.release(t.id, 'sim/planner', waitFor);
  }
  return seen.filter((t) => t.jobId !== link(0)).length;
}

export async function dependenciesRow(engine: ScheduleEngine): Promise<Row> {
  const clock = new SimClock();
  const opened = await openClockedQueue(engine, clock.now);
  const { close } = opened;
  const queue = opened.queue as TaskQueue & Partial<DependencyWakes>;
  try {
    if (!queue.jobEnded) throw new Error(`${engine}: the queue has no jobEnded (dependency wakes)`);
    const wake = queue.jobEnded.bind(queue);
    const jobs = new Map<string, SimJob>();
    // Tasks enqueued and not claimed yet, and finalize tasks waiting for their chunks: what "runnable" counts.
    const waiting = new Set<string>();
    const joins = new Map<string, { left: number; finalizeId: string }>();
    const planned = async (jobId: string) => {
      const p = await enqueuePlanned(queue, jobId, LINK_FRAMES, { chunk: CHUNK, shareGroup: 'ws-chain/artist' });
      for (const id of p.chunkIds) waiting.add(id);
      joins.set(jobId, { left: p.chunkIds.length, finalizeId: p.finalizeId });
    };
    jobs.set('background', { workspace: 'ws-bg', frameSeconds: 20 });
    const bg = await enqueuePlanned(queue, 'background', BACKGROUND_FRAMES, {
      chunk: 1,
      shareGroup: 'ws-bg/artist',
      previews: false,
    });
    for (const id of bg.chunkIds) waiting.add(id);
    joins.set('background', { left: bg.chunkIds.length, finalizeId: bg.finalizeId });
    // The whole chain submitted at once; every link but the first waits in the queue for its wake.
    for (let k = 0; k < LINKS; k++) {
      jobs.set(link(k), { workspace: 'ws-chain', frameSeconds: LINK_FRAME_SECONDS });
      await queue.enqueue({ id: planId(link(k)), jobId: link(k), kind: 'render', shareGroup: 'ws-chain/artist' });
    }
    const completedAt = new Map<string, number>();
    const deferred = await deferChain(queue);
    waiting.add(planId(link(0)));
    // Planning tasks claimed before the link before them completed: a wake too early (or a delay run out).
    let early = 0;
    const onDone = async (task: Task, at: number) => {
      if (task.kind === 'render') return planned(task.jobId);
      if (task.kind === 'finalize') {
        completedAt.set(task.jobId, at - SIM_T0);
        // What the job store's end feed does in the service: the queue wakes the link waiting for it.
        await wake(task.jobId);
        const k = Number(task.jobId.slice('chain-'.length));
        if (task.jobId !== 'background' && k + 1 < LINKS) waiting.add(planId(link(k + 1)));
        return;
      }
      const j = joins.get(task.jobId)!;
      if (--j.left === 0) waiting.add(j.finalizeId);
    };
    const r = await runFarm(queue, clock, jobs, {
      slots: SLOTS,
      seconds: SECONDS,
      kinds: ['render', 'render-chunk', 'finalize'],
      taskSeconds: (task, job) =>
        task.kind === 'render'
          ? PLAN_SECONDS
          : task.kind === 'finalize'
            ? FINALIZE_SECONDS
            : (task.payload.frames as number[]).length * job.frameSeconds,
      onDone,
      runnable: () => waiting.size,
      onClaim: (task) => {
        const k = Number(task.jobId.slice('chain-'.length));
        if (task.kind === 'render' && k > 0 && !completedAt.has(link(k - 1))) early++;
        waiting.delete(task.id);
      },
    });
    // When each link's first frame started: its planning task is no frame.
    const firstFrame = new Map<string, number>();
    for (const { task, at } of r.finished) {
      if (task.kind !== 'render-chunk') continue;
      const start = at - (task.payload.frames as number[]).length * LINK_FRAME_SECONDS * 1000;
      firstFrame.set(task.jobId, Math.min(start, firstFrame.get(task.jobId) ?? start));
    }
    let inOrder = 0;
    let gaps = 0;
    for (let k = 0; k < LINKS; k++) {
      const start = firstFrame.get(link(k));
      const before = k === 0 ? 0 : completedAt.get(link(k - 1));
      if (start !== undefined && before !== undefined && start >= before) inOrder++;
      if (k > 0 && start !== undefined && before !== undefined) gaps = Math.max(gaps, start - before);
    }
    const done = [...completedAt.keys()].filter((id) => id !== 'background').length;
    const idle = r.idleWhileRunnable.length;
    const last = completedAt.get(link(LINKS - 1));
    return {
      adapter: engine,
      measure: `dependencies: a chain of ${LINKS} jobs (${LINK_FRAMES} frames each) beside a background backlog`,
      result:
        `${inOrder} of ${LINKS} started after the one before completed (${done} completed` +
        (last !== undefined ? `, the last at ${(last / 1000).toFixed(0)} s` : '') +
        `; longest from a link's end to the next one's first frame ${(gaps / 1000).toFixed(1)} s, ` +
        `planning included, ${PLAN_SECONDS} s); ${idle} claims found nothing while a task was claimable; ` +
        `${deferred} links waited in the queue (release waitFor, woken by jobEnded), ${early} woken early`,
      target: 'in order, no slot idle while a frame waits',
      verdict: verdict(inOrder === LINKS && done === LINKS && idle === 0 && early === 0 && deferred === LINKS - 1),
    };
  } finally {
    await close();
  }
}
