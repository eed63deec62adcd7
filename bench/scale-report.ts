// Tables and text of bench:scale's results: one row per queue and phase, a summary with each
// queue against the embedded one, and what limited each queue, read from the measurements.
import os from 'node:os';
import { fmt, median, type Row } from './lib/results.js';
import { ENGINE_LABEL, type EngineName } from './scale-engines.js';
import type { Measurement, PhaseName, PhaseResult } from './scale-run.js';

export interface ReportSettings {
  jobs: number;
  tasksPerJob: number;
  processes: number;
  lanes: number;
  /** Steady phase: tasks per second, and how many jobs' tasks. */
  rate: number;
  steadyJobs: number;
  taskMs: number;
  warmupJobs: number;
  rounds: number;
}

export const PHASES: PhaseName[] = ['burst', 'steady'];
const ms = (n: number) => `${n.toFixed(1)} ms`;
const cores = (n: number) => n.toFixed(2);

/**
 * A steady phase whose queue did not keep up: the producer could not enqueue at the rate, or the
 * workers finished well below the rate it reached (a queue that keeps up ends one delay after the
 * last enqueue). Its delays are backlog, not latency.
 */
function behind(p: PhaseResult, s: ReportSettings): boolean {
  return p.enqueueRate < 0.9 * s.rate || p.tasksPerSecond < 0.9 * p.enqueueRate;
}

export function resultRow(round: number, m: Measurement, phase: PhaseName, s: ReportSettings): Row {
  const p = m.phases[phase];
  return {
    round: String(round),
    queue: ENGINE_LABEL[m.engine],
    phase,
    tasks: fmt.int(p.tasks),
    'enqueue tasks/s': fmt.int(p.enqueueRate),
    'tasks/s': `${fmt.int(p.tasksPerSecond)}${phase === 'steady' && behind(p, s) ? ' (behind)' : ''}`,
    'delay p50': ms(p.p50),
    'delay p99': ms(p.p99),
    'delay max': ms(p.max),
    'tasks per process': p.perProcess.map(fmt.pct).join(' / '),
    'lane ms/task': p.laneMs.toFixed(2),
    'claim ms': p.claimMs.toFixed(2),
    'complete ms': p.completeMs.toFixed(2),
    'lanes busy': fmt.pct(p.lanesBusy),
    'idle polls/s': fmt.int(p.emptyClaimsPerSecond),
    'worker CPU': cores(p.workerCpu),
    'producer CPU': cores(p.producerCpu),
    'server CPU': m.engine === 'embedded' ? '' : cores(p.serverCpu),
  };
}

/** Median over the rounds of one engine's phase value. */
function med(all: Measurement[], engine: EngineName, phase: PhaseName, get: (p: PhaseResult) => number): number {
  return median(all.filter((m) => m.engine === engine).map((m) => get(m.phases[phase])));
}

/** Medians over the rounds, and each engine against the embedded queue. */
export function summaryRows(all: Measurement[], engines: EngineName[]): Row[] {
  const rows: Row[] = [];
  const metrics: [string, (p: PhaseResult) => number, (n: number) => string][] = [
    ['tasks/s', (p) => p.tasksPerSecond, fmt.int],
    ['delay p50', (p) => p.p50, ms],
    ['delay p99', (p) => p.p99, ms],
  ];
  for (const phase of PHASES) {
    for (const [metric, get, show] of metrics) {
      const r: Row = { phase, metric };
      const base = engines.includes('embedded') ? med(all, 'embedded', phase, get) : NaN;
      for (const e of engines) {
        const v = med(all, e, phase, get);
        r[ENGINE_LABEL[e]] = show(v);
        if (e !== 'embedded' && !Number.isNaN(base))
          r[`${ENGINE_LABEL[e].split(' ')[0]}/embedded`] = `${(v / base).toFixed(2)}x`;
      }
      rows.push(r);
    }
  }
  return rows;
}

/** One line per engine on what bounded its burst, and one on the steady delays, from the numbers. */
export function limitLines(all: Measurement[], engines: EngineName[], s: ReportSettings): string[] {
  const lanes = s.processes * s.lanes;
  const lines = engines.map((e) => {
    const v = (get: (p: PhaseResult) => number) => med(all, e, 'burst', get);
    const [tps, enq, busy, lane, claim, complete] = [
      v((p) => p.tasksPerSecond),
      v((p) => p.enqueueRate),
      v((p) => p.lanesBusy),
      v((p) => p.laneMs),
      v((p) => p.claimMs),
      v((p) => p.completeMs),
    ];
    const cpu = v((p) => p.workerCpu) + v((p) => p.producerCpu) + (e === 'embedded' ? 0 : v((p) => p.serverCpu));
    const split =
      `claim ${claim.toFixed(1)} ms, job read + placement + handler ${(lane - claim - complete).toFixed(1)} ` +
      `ms, complete ${complete.toFixed(1)} ms`;
    const n = os.cpus().length;
    const cpuBound = cpu >= 0.75 * n;
    const nearAll = ' (near all of them: on this machine CPU is the next limit, and more lanes would mostly share it)';
    let cpuNote = `; workers, producer and server used ${cpu.toFixed(2)} of ${n} cores${cpuBound ? nearAll : ''}`;
    let why: string;
    if (busy >= 0.8) {
      why =
        `the workers: the ${lanes} render lanes were busy ${fmt.pct(busy)} of the time, and a task holds a ` +
        `lane ${lane.toFixed(1)} ms (${split}), so ${lanes} lanes top out ` +
        `near ${fmt.int((lanes * 1000) / lane)} tasks/s`;
    } else if (tps >= 0.9 * enq) {
      why =
        `the producer: one process enqueuing one task at a time reached ${fmt.int(enq)} tasks/s ` +
        `(${(1000 / enq).toFixed(1)} ms per enqueue) and the workers kept pace, their lanes ` +
        `busy ${fmt.pct(busy)} of the time (${split})`;
    } else if (cpuBound) {
      why =
        `the machine's CPU: workers, producer and server used ${cpu.toFixed(2)} of ${n} cores, while neither ` +
        `the lanes (busy ${fmt.pct(busy)}; ${split}) nor the producer (${fmt.int(enq)} tasks/s) were saturated`;
      cpuNote = '';
    } else {
      why = `neither the lanes (busy ${fmt.pct(busy)}; ${split}) nor the producer (${fmt.int(enq)} tasks/s) alone`;
    }
    return `- **${ENGINE_LABEL[e]}, burst: ${fmt.int(tps)} tasks/s**, bounded by ${why}${cpuNote}.`;
  });
  const p99s = engines.map((e) => `${ENGINE_LABEL[e]} ${ms(med(all, e, 'steady', (p) => p.p99))}`).join(', ');
  lines.push(
    `- **Steady, delay p99: ${p99s}.** On BullMQ and PostgreSQL an enqueue in another process wakes one idle ` +
      `lane at once (a ready signal: Redis pub/sub, PostgreSQL NOTIFY), so the delay is the signal's trip plus ` +
      `a claim. The embedded SQLite queue has no signal across processes: a task enqueued while the lanes are ` +
      `idle waits for the next poll of one of them (every 200 ms, the runtime's \`pollMs\` default; a worker ` +
      `process also wakes its own idle lanes after each task it completes). More throughput needs more lanes ` +
      `or a shorter per-task path.`,
  );
  return lines;
}

/** The setup paragraph: what ran, and how each number is taken. */
export function setupText(s: ReportSettings, where: { redis: string; postgres: string }): string {
  const total = s.jobs * s.tasksPerJob;
  return `Setup: ${fmt.int(s.jobs)} real job records (SQLite job store, seeded as bench:api does), each given
${s.tasksPerJob} one-frame \`render-chunk\` tasks shaped as render-plan.ts makes them: ${fmt.int(total)} tasks in the \
burst.
They are consumed by ${s.processes} worker processes, each running the real \`WorkerRuntime\`
(service/worker/runtime/runtime.ts) with one control lane (validate, render, finalize: it only polls here)
and ${s.lanes} render lanes, as a worker with ${s.lanes} render slots has: ${s.processes * s.lanes} lanes take \
\`render-chunk\` tasks, ${s.processes * (s.lanes + 1)} lanes poll.
Per task the runtime does what it does on a farm: claim (30 s lease), read the job
(\`jobs.getById\`), check placement (the job's blocklist, read from the queue), run the handler,
complete; heartbeats every 500 ms while a task runs${s.taskMs < 500 ? ' (none is due with tasks this short)' : ''}. A \
lane
claims again at once after a task, and polls every 200 ms (the runtime's default) while the queue is
empty. The producer is another process: on BullMQ and PostgreSQL its enqueues wake one idle lane
through the queue's ready signal (Redis pub/sub, NOTIFY/LISTEN), as on a farm; the embedded queue
has none, so there the lanes find tasks by polling.
The trivial scene: the handler ${s.taskMs > 0 ? `waits ${s.taskMs} ms` : 'returns at once'} and starts no Blender: a
Blender start alone costs about 0.4 s and would measure Blender, not scheduling (bench:render covers
Blender). Logging is off (pino level silent). The job store is the same SQLite file in every row; only
the queue differs: the embedded queue in that file (the producer and the worker processes share it),
BullMQ 6 on Redis at ${where.redis} (a key prefix of its own, deleted afterwards), PostgreSQL's queue on
${where.postgres} (a database of its own, dropped afterwards). Each row starts from a fresh copy of the
seeded data and a fresh queue, with worker processes started for it; an untimed warm-up of
${fmt.int(s.warmupJobs * s.tasksPerJob)} tasks comes first. Nothing is pinned: the workers, the producer and the \
queue's server share the
machine's ${os.cpus().length} cores.

Phases, one after the other on the same worker processes:
- **burst**: this process (the producer) enqueues all ${fmt.int(total)} tasks as fast as \`enqueue()\` returns, job
  after job (as render-plan.ts does), while the workers are already claiming. Its tasks/s is the
  throughput; its delays are mostly time spent behind the backlog.
- **steady**: the tasks of the first ${fmt.int(s.steadyJobs)} jobs (${fmt.int(s.steadyJobs * s.tasksPerJob)} tasks) \
enqueued at a steady ${fmt.int(s.rate)} tasks/s.
  While a queue keeps up, its tasks/s is just that rate and the delay is scheduling latency: mostly
  how soon an idle lane polls again. "(behind)" marks a queue that did not keep up (enqueues below
  90% of the rate, or tasks/s below 90% of the enqueue rate): its delays then include backlog.

A task is ready when its \`enqueue()\` returned (none waits for another task); it starts when the
handler is entered. Times come from each process's \`performance.timeOrigin + performance.now()\` (one
clock across processes). "tasks/s" is the phase's tasks over the time from the first task ready to
the last completion stored; "enqueue tasks/s" is the producer's own rate (a bound on the burst's
tasks/s). "lane ms/task" is the mean time a task holds a lane, from its claim being called to its
completion stored, with the claim's and \`complete()\`'s parts as the lane waits for them (CPU
contention included); "lanes busy" is tasks/s x lane time over the render lanes (Little's law; 100%:
no lane ever idle); "idle polls/s" counts claims that found nothing, all lanes together. CPU columns
are averages over the phase in cores (1.00 = one core): all worker processes together, the producer,
and Redis (INFO cpu) or PostgreSQL (its processes). Every run checks that each enqueued task ran
exactly once, on its first attempt, and was completed, and that the queue's counts agree; it fails
otherwise. ${s.rounds} \
round${s.rounds > 1 ? 's, rotating which queue goes first; the summary and the limits use the **median**' : ''}.`;
}
