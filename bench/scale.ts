// Scale-out benchmark: scheduling throughput of the farm's worker runtime on each task queue,
// in the same run: the embedded queue (SQLite), BullMQ (Redis) and PostgreSQL's. 1,000 jobs x 10
// one-frame render-chunk tasks with a trivial scene (the handler starts no Blender), consumed by
// several worker processes; tasks per second, and the delay from a task becoming ready to a
// worker starting it. No numeric target (issue 7 asks for the numbers). `npm run bench:scale`.
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { seedJobs } from './lib/seed.js';
import { atExit } from './lib/children.js';
import { loadNote, machineMarkdown, otherLoadMeter, quietCheck } from './lib/machine.js';
import { consoleTable, markdownTable, writeResultsSection, type Row } from './lib/results.js';
import {
  ENGINE_LABEL,
  ENGINES,
  engineMissing,
  pgServer,
  redisServer,
  tmpRootDir,
  type EngineName,
} from './scale-engines.js';
import { limitLines, PHASES, resultRow, setupText, summaryRows, type ReportSettings } from './scale-report.js';
import { measure, type Measurement, type RunOptions } from './scale-run.js';

/** A whole-number knob from the environment, at least `min`; a clear error otherwise. */
function knob(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < min)
    throw new Error(`${name} must be a whole number >= ${min} (got ${JSON.stringify(raw)})`);
  return v;
}

// Knobs (environment). The defaults are the size; BENCH_SCALE_JOBS=100 is a quick check.
/** BENCH_SCALE_JOBS: job records, each given TASKS_PER_JOB tasks in the burst. Default 1000. */
const JOBS = knob('BENCH_SCALE_JOBS', 1000);
/** BENCH_SCALE_TASKS_PER_JOB: one-frame render-chunk tasks per job. Default 10. */
const TASKS_PER_JOB = knob('BENCH_SCALE_TASKS_PER_JOB', 10);
/** BENCH_SCALE_PROCESSES: worker processes. Default 2 (the reference machine has 2 cores). */
const PROCESSES = knob('BENCH_SCALE_PROCESSES', 2);
/** BENCH_SCALE_LANES: render lanes per worker process (a control lane comes on top). Default 4. */
const LANES = knob('BENCH_SCALE_LANES', 4);
/** BENCH_SCALE_RATE: tasks per second of the steady phase; below every queue's capacity. Default 100. */
const RATE = knob('BENCH_SCALE_RATE', 100);
/** BENCH_SCALE_STEADY_JOBS: jobs whose tasks the steady phase enqueues. Default 300 (3,000 tasks, 30 s at 100/s). */
const STEADY_JOBS = Math.min(JOBS, knob('BENCH_SCALE_STEADY_JOBS', 300));
/** BENCH_SCALE_TASK_MS: how long each task's handler takes. Default 0 (returns at once). */
const TASK_MS = knob('BENCH_SCALE_TASK_MS', 0, 0);
/** BENCH_ROUNDS: measurements per queue; the summary takes medians. Default 1. */
const ROUNDS = knob('BENCH_ROUNDS', 1);
/** Jobs of the untimed warm-up. */
const WARMUP_JOBS = Math.min(JOBS, 50);
const FULL_SIZE = JOBS === 1000 && TASKS_PER_JOB === 10;

/**
 * BENCH_SCALE_ENGINES: the queues to measure, comma-separated. Default embedded,bullmq,postgres.
 * Redis and PostgreSQL are the test servers: RENDERBRIDGE_TEST_REDIS_URL, RENDERBRIDGE_TEST_PG_URL.
 */
function selectedEngines(): EngineName[] {
  const raw = process.env.BENCH_SCALE_ENGINES ?? ENGINES.join(',');
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(ENGINES as readonly string[]).includes(n))
      throw new Error(`BENCH_SCALE_ENGINES: unknown engine ${n}; use some of ${ENGINES.join(',')}`);
  return names as EngineName[];
}

async function main(): Promise<void> {
  const engines = selectedEngines();
  for (const e of engines) {
    const why = await engineMissing(e);
    if (why)
      throw new Error(`${why}, or leave it out: BENCH_SCALE_ENGINES=${engines.filter((x) => x !== e).join(',')}`);
  }
  const busy = await quietCheck();
  const otherLoad = otherLoadMeter();
  const tmpRoot = await tmpRootDir();
  atExit(() => rmSync(tmpRoot, { recursive: true, force: true }));
  const seededDir = await mkdtemp(path.join(tmpRoot, 'seed-'));
  const t = performance.now();
  const jobIds = (await seedJobs(seededDir, JOBS)).ids;
  console.log(`seeded ${JOBS} jobs in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const settings: ReportSettings = {
    jobs: JOBS,
    tasksPerJob: TASKS_PER_JOB,
    processes: PROCESSES,
    lanes: LANES,
    rate: RATE,
    steadyJobs: STEADY_JOBS,
    taskMs: TASK_MS,
    warmupJobs: WARMUP_JOBS,
    rounds: ROUNDS,
  };
  const opts: RunOptions = { ...settings, jobIds, seededDir, tmpRoot };

  const all: Measurement[] = [];
  const rows: Row[] = [];
  let serverSeconds = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    // Rotate which queue goes first, so slow drift on the machine hits all alike.
    const order = [...engines.slice((round - 1) % engines.length), ...engines.slice(0, (round - 1) % engines.length)];
    for (const engine of order) {
      console.log(`round ${round}: ${ENGINE_LABEL[engine]} ...`);
      const m = await measure(engine, opts);
      all.push(m);
      serverSeconds += m.serverCpuSeconds;
      for (const phase of PHASES) rows.push(resultRow(round, m, phase, settings));
      console.log(consoleTable(rows.slice(-PHASES.length)));
    }
  }
  const measured = otherLoad();
  // Redis and PostgreSQL work for this benchmark: their CPU is ours, not other load.
  const wall = (performance.now() - t) / 1000;
  const others = { ...measured, others: Math.max(0, measured.others - serverSeconds / wall) };
  const sum = summaryRows(all, engines);
  const limits = limitLines(all, engines, settings);
  console.log(`\n${consoleTable(rows)}\n\n${consoleTable(sum)}\n\n${limits.join('\n')}`);
  console.log(loadNote(busy, others).slice(2));

  const quick = FULL_SIZE
    ? ''
    : `\n**Quick run (BENCH_SCALE_JOBS=${JOBS}, BENCH_SCALE_TASKS_PER_JOB=${TASKS_PER_JOB}): not the issue's ` +
      `1,000 jobs x 10 tasks. Run \`npm run bench:scale\` on a quiet machine for the real numbers.**\n`;
  const body = `${machineMarkdown()}
${loadNote(busy, others)}
${quick}
${setupText(settings, { redis: redisServer(), postgres: pgServer() })}

${markdownTable(rows)}

Summary${ROUNDS > 1 ? ' (medians)' : ''}; ratios are each queue over the embedded one (above 1x: more tasks/s, or a \
longer delay):

${markdownTable(sum)}

What limits them (read from the numbers above):

${limits.join('\n')}
`;
  await writeResultsSection('scale', 'Scale-out scheduling: BullMQ vs embedded queue (npm run bench:scale)', body);
  console.log('\nwrote bench/RESULTS.md');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
