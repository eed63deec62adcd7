// bench:schedule: the claim order of a shared farm on each real queue adapter (SQLite, PostgreSQL,
// BullMQ), with 64 simulated slots on a simulated clock (schedule-sim.ts). Measures:
//  - fair share: three workspaces, weights 1:1:2, all backlogged, frames of 20, 40 and 10 s: each
//    one's share of slot seconds over 10 simulated minutes, against its weight (target +-5%);
//  - priority: a priority-10 two-frame job submitted at minute 5 into the full farm: how long until
//    its first frame starts, against the shortest frame running (target: within it);
//  - throughput: claims per second (real time) of 16 claim-and-complete loops draining 3,000
//    tasks, with groups, weights and priorities on, and FIFO (no group, no priority) in the same run.
//  - previews: jobs planned previews first into the shared farm, some while it is full: each job's
//    first, middle and last frames done before 10% of its others (schedule-previews.ts);
//  - dependencies: a chain of 20 jobs beside a background backlog: in order, and no claim finding
//    nothing while a task was claimable (schedule-deps.ts).
// Usage: npm run bench:schedule [-- --engines SQLite,PostgreSQL,BullMQ]
import { fmt, markdownTable, consoleTable, verdict, writeResultsSection, type Row } from './lib/results.js';
import { cpuBusy, machineMarkdown, otherLoadMeter, loadNote } from './lib/machine.js';
import { SimClock, drainRate, runFarm, submit, type SimJob } from './schedule-sim.js';
import { previewsRow } from './schedule-previews.js';
import { dependenciesRow } from './schedule-deps.js';
import { SCHEDULE_ENGINES, openClockedQueue, scheduleEngineMissing, type ScheduleEngine } from './schedule-engines.js';

const SLOTS = 64;
const SECONDS = 600;
const WORKSPACES = [
  { ws: 'ws-a', weight: 1, frameSeconds: 20, frames: 700 },
  { ws: 'ws-b', weight: 1, frameSeconds: 40, frames: 400 },
  { ws: 'ws-c', weight: 2, frameSeconds: 10, frames: 2400 },
];
const THROUGHPUT_TASKS = 3000;
const CLAIMERS = 16;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function fairShareAndPriority(engine: ScheduleEngine): Promise<Row[]> {
  const clock = new SimClock();
  const { queue, close } = await openClockedQueue(engine, clock.now);
  try {
    const jobs = new Map<string, SimJob>();
    for (const w of WORKSPACES) {
      await queue.setShareWeight(w.ws, w.weight);
      jobs.set(`${w.ws}-job`, { workspace: w.ws, frameSeconds: w.frameSeconds });
      await submit(queue, `${w.ws}-job`, w.frames, { shareGroup: `${w.ws}/artist` });
    }
    const urgent = { workspace: 'ws-a', frameSeconds: 20 };
    const r = await runFarm(queue, clock, jobs, {
      slots: SLOTS,
      seconds: SECONDS,
      at: [
        {
          second: 300,
          run: async () => {
            await submit(queue, 'urgent', 2, { shareGroup: 'ws-a/lead', priority: 10 });
            return { urgent };
          },
        },
      ],
    });
    const total = Object.values(r.slotSeconds).reduce((a, b) => a + b, 0);
    const weights = WORKSPACES.reduce((a, w) => a + w.weight, 0);
    const rows: Row[] = WORKSPACES.map((w) => {
      const share = (r.slotSeconds[w.ws] ?? 0) / total;
      const want = w.weight / weights;
      const off = share / want - 1;
      return {
        adapter: engine,
        measure: `fair share ${w.ws} (weight ${w.weight}, ${w.frameSeconds} s frames)`,
        result: `${(share * 100).toFixed(1)}% of slot seconds (weight's ${(want * 100).toFixed(1)}%, ${
          off >= 0 ? '+' : ''
        }${(off * 100).toFixed(1)}%)`,
        target: '+-5% of weight',
        verdict: verdict(Math.abs(off) <= 0.05),
      };
    });
    const shortest = Math.min(...WORKSPACES.map((w) => w.frameSeconds));
    const wait = ((r.firstStart.urgent ?? Number.POSITIVE_INFINITY) - 300_000) / 1000;
    rows.push({
      adapter: engine,
      measure: 'priority: first frame of a 2-frame job into the full farm',
      result: `started ${wait.toFixed(1)} s after submit (${r.claims} claims simulated)`,
      target: `<= ${shortest} s (shortest frame running)`,
      verdict: verdict(wait <= shortest),
    });
    return rows;
  } finally {
    await close();
  }
}

async function throughput(engine: ScheduleEngine, mode: 'FIFO' | 'all on'): Promise<number> {
  const { queue, close } = await openClockedQueue(engine, Date.now);
  try {
    if (mode === 'FIFO') await submit(queue, 'fifo', THROUGHPUT_TASKS);
    else {
      for (const w of WORKSPACES) await queue.setShareWeight(w.ws, w.weight);
      const per = THROUGHPUT_TASKS / 3;
      await submit(queue, 'a', per, { shareGroup: 'ws-a/artist' });
      await submit(queue, 'b', per - 100, { shareGroup: 'ws-b/artist' });
      await submit(queue, 'b-urgent', 100, { shareGroup: 'ws-b/lead', priority: 5 });
      await submit(queue, 'c', per, { shareGroup: 'ws-c/artist' });
      // A paused job's tasks stay out of the way of every claim.
      await submit(queue, 'held', 200, { shareGroup: 'ws-c/artist' });
      await queue.pauseJob('held');
    }
    const r = await drainRate(queue, CLAIMERS);
    if (r.claims !== THROUGHPUT_TASKS) throw new Error(`${engine} ${mode}: drained ${r.claims} of ${THROUGHPUT_TASKS}`);
    return r.perSecond;
  } finally {
    await close();
  }
}

async function main(): Promise<void> {
  const wanted = (arg('engines')?.split(',') ?? [...SCHEDULE_ENGINES]) as ScheduleEngine[];
  const before = await cpuBusy();
  const others = otherLoadMeter();
  const rows: Row[] = [];
  for (const engine of wanted) {
    const missing = await scheduleEngineMissing(engine);
    if (missing) {
      rows.push({ adapter: engine, measure: 'all', result: `not run: ${missing}`, target: '', verdict: '' });
      continue;
    }
    console.log(`${engine}: fair share and priority (${SLOTS} slots, ${SECONDS} simulated s)`);
    rows.push(...(await fairShareAndPriority(engine)));
    console.log(`${engine}: throughput`);
    const fifo = await throughput(engine, 'FIFO');
    const on = await throughput(engine, 'all on');
    rows.push({
      adapter: engine,
      measure: `throughput: claims/s, ${CLAIMERS} claimers draining ${fmt.int(THROUGHPUT_TASKS)} tasks`,
      result: `${fmt.int(on)}/s with groups, weights, priority, a paused job; FIFO ${fmt.int(fifo)}/s`,
      target: '>= 1,000/s',
      verdict: verdict(on >= 1000),
    });
    console.log(`${engine}: previews`);
    rows.push(await previewsRow(engine));
    console.log(`${engine}: dependencies`);
    rows.push(await dependenciesRow(engine));
  }
  const load = others();
  console.log(consoleTable(rows));
  const body = [
    machineMarkdown(),
    loadNote(before, load),
    `- Queues: fresh SQLite file, PostgreSQL database and Redis key prefix per measurement, on this machine.`,
    `- ${SLOTS} simulated slots on a simulated clock drive the real adapters (bench/schedule-sim.ts); ` +
      `throughput is real time, in-process claimers (no HTTP, no worker processes).`,
    `- FIFO is the same adapters with every task in one group at priority 0 (the order before priorities and ` +
      `fair share); fair share and priority are on the simulated clock, so the machine's load does not move them.`,
    '',
    markdownTable(rows),
  ].join('\n');
  await writeResultsSection(
    'schedule',
    'Schedule: priority, fair share and pause on each queue (npm run bench:schedule)',
    body,
  );
}

await main();
process.exit(0);
