// bench:schedule's dependencies row: a chain of 20 jobs, each waiting for the one before, beside a
// background backlog of another workspace that runs out half-way. Each link's planning task is
// enqueued when the job before it completes (the wake the queue gives a waiting job, at once), and
// planning enqueues the job previews first with its finalize after its chunks (schedule-plans.ts).
// Measured: that the links ran in order, and that no claim found nothing while a task was
// claimable (a frame waiting and a slot idle).
import { verdict, type Row } from './lib/results.js';
import { SIM_T0, SimClock, runFarm, type SimJob } from './schedule-sim.js';
import { enqueuePlanned, planId } from './schedule-plans.js';
import { openClockedQueue, type ScheduleEngine } from './schedule-engines.js';
import type { Task } from '../service/ports/tasks.js';

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

const link = (k: number) => `chain-${String(k).padStart(2, '0')}`;

export async function dependenciesRow(engine: ScheduleEngine): Promise<Row> {
  const clock = new SimClock();
  const { queue, close } = await openClockedQueue(engine, clock.now);
  try {
    const jobs = new Map<string, SimJob>();
    // Tasks enqueued and not claimed yet, and finalize tasks waiting for their chunks: what "runnable" counts.
    const waiting = new Set<string>();
    const joins = new Map<string, { left: number; finalizeId: string }>();
    const planned = async (jobId: string) => {
      const p = await enqueuePlanned(queue, jobId, LINK_FRAMES, { chunk: CHUNK, shareGroup: 'ws-chain/artist' });
      for (const id of p.chunkIds) waiting.add(id);
      joins.set(jobId, { left: p.chunkIds.length, finalizeId: p.finalizeId });
    };
    const plan = async (k: number) => {
      jobs.set(link(k), { workspace: 'ws-chain', frameSeconds: LINK_FRAME_SECONDS });
      await queue.enqueue({ id: planId(link(k)), jobId: link(k), kind: 'render', shareGroup: 'ws-chain/artist' });
      waiting.add(planId(link(k)));
    };
    jobs.set('background', { workspace: 'ws-bg', frameSeconds: 20 });
    const bg = await enqueuePlanned(queue, 'background', BACKGROUND_FRAMES, {
      chunk: 1,
      shareGroup: 'ws-bg/artist',
      previews: false,
    });
    for (const id of bg.chunkIds) waiting.add(id);
    joins.set('background', { left: bg.chunkIds.length, finalizeId: bg.finalizeId });
    await plan(0);
    const completedAt = new Map<string, number>();
    const onDone = async (task: Task, at: number) => {
      if (task.kind === 'render') return planned(task.jobId);
      if (task.kind === 'finalize') {
        completedAt.set(task.jobId, at - SIM_T0);
        const k = Number(task.jobId.slice('chain-'.length));
        if (task.jobId !== 'background' && k + 1 < LINKS) await plan(k + 1);
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
      onClaim: (task) => void waiting.delete(task.id),
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
        `planning included, ${PLAN_SECONDS} s); ${idle} claims found nothing while a task was claimable`,
      target: 'in order, no slot idle while a frame waits',
      verdict: verdict(inOrder === LINKS && done === LINKS && idle === 0),
    };
  } finally {
    await close();
  }
}
