// bench:schedule's previews row: jobs planned previews first (schedule-plans.ts) into a farm shared
// by three workspaces, some submitted while it is full, others behind their own submitter's backlog.
// For each job: when its last preview frame was done, against when 10% of its other frames were.
import { verdict, type Row } from './lib/results.js';
import { SimClock, runFarm, type SimJob } from './schedule-sim.js';
import { enqueuePlanned, type PlannedJob } from './schedule-plans.js';
import { openClockedQueue, type ScheduleEngine } from './schedule-engines.js';

const SLOTS = 64;
const SECONDS = 900;
/** Frames per chunk of the other frames (previews are one frame each). */
const CHUNK = 4;
const WEIGHTS = { 'ws-a': 1, 'ws-b': 1, 'ws-c': 2 };
/** Jobs and when they are submitted: the first three fill the farm, the others come into it full. */
const JOBS = [
  { id: 'a-shot', second: 0, group: 'ws-a/artist', frames: 300, frameSeconds: 20 },
  { id: 'b-shot', second: 0, group: 'ws-b/artist', frames: 120, frameSeconds: 40 },
  { id: 'c-shot', second: 0, group: 'ws-c/artist', frames: 600, frameSeconds: 10 },
  { id: 'a-lead', second: 60, group: 'ws-a/lead', frames: 100, frameSeconds: 20 },
  { id: 'b-shot2', second: 120, group: 'ws-b/artist', frames: 80, frameSeconds: 40 },
  { id: 'c-comp', second: 200, group: 'ws-c/comp', frames: 200, frameSeconds: 10 },
];

interface JobOutcome {
  id: string;
  /** Seconds from submit until the last preview frame was done; undefined when it was not. */
  previews?: number;
  /** Seconds from submit until 10% of the other frames were done; undefined when they were not. */
  tenth?: number;
}

export async function previewsRow(engine: ScheduleEngine): Promise<Row> {
  const clock = new SimClock();
  const { queue, close } = await openClockedQueue(engine, clock.now);
  try {
    for (const [ws, w] of Object.entries(WEIGHTS)) await queue.setShareWeight(ws, w);
    const plans = new Map<string, PlannedJob>();
    const jobs = new Map<string, SimJob>();
    const submitJob = async (j: (typeof JOBS)[number]) => {
      const sim = { workspace: j.group.split('/')[0]!, frameSeconds: j.frameSeconds };
      plans.set(j.id, await enqueuePlanned(queue, j.id, j.frames, { chunk: CHUNK, shareGroup: j.group }));
      return { [j.id]: sim };
    };
    for (const j of JOBS.filter((x) => x.second === 0))
      for (const [id, s] of Object.entries(await submitJob(j))) jobs.set(id, s);
    const r = await runFarm(queue, clock, jobs, {
      slots: SLOTS,
      seconds: SECONDS,
      kinds: ['render-chunk', 'finalize'],
      taskSeconds: (task, job) =>
        task.kind === 'finalize' ? 0 : ((task.payload.frames as number[]).length ?? 1) * job.frameSeconds,
      at: JOBS.filter((x) => x.second > 0).map((j) => ({ second: j.second, run: () => submitJob(j) })),
    });
    const outcomes: JobOutcome[] = JOBS.map((j) => {
      const plan = plans.get(j.id)!;
      const previewIds = new Set(plan.chunkIds.slice(0, plan.previews.length));
      const others = j.frames - plan.previews.length;
      const want = Math.ceil(others * 0.1);
      let previewsLeft = previewIds.size;
      let othersDone = 0;
      const out: JobOutcome = { id: j.id };
      for (const { task, at } of r.finished) {
        if (task.jobId !== j.id || task.kind !== 'render-chunk') continue;
        const since = at / 1000 - j.second;
        if (previewIds.has(task.id)) {
          if (--previewsLeft === 0) out.previews = since;
        } else if (othersDone < want && (othersDone += (task.payload.frames as number[]).length) >= want) {
          out.tenth = since;
        }
      }
      return out;
    });
    const ok = outcomes.filter((o) => o.previews !== undefined && (o.tenth === undefined || o.previews <= o.tenth));
    const unreached = outcomes.filter((o) => o.tenth === undefined);
    const worst = outcomes
      .filter((o) => o.previews !== undefined && o.tenth !== undefined)
      .sort((a, b) => a.tenth! - a.previews! - (b.tenth! - b.previews!))[0];
    const s = (n: number) => `${n.toFixed(0)} s`;
    return {
      adapter: engine,
      measure: `previews: first, middle, last frames first (${JOBS.length} jobs, ${SLOTS} slots, 3 workspaces)`,
      result:
        `${ok.length} of ${JOBS.length} jobs had their previews done before 10% of their other frames` +
        (worst
          ? `; closest: ${worst.id}, previews ${s(worst.previews!)} after submit, 10% at ${s(worst.tenth!)}`
          : '') +
        (unreached.length ? `; ${unreached.map((o) => o.id).join(', ')} not at 10% within ${SECONDS} s` : ''),
      target: 'every job',
      verdict: verdict(ok.length === JOBS.length && unreached.length === 0),
    };
  } finally {
    await close();
  }
}
