// Child process of bench:scale: one worker process of the farm. The real WorkerRuntime (claim,
// job read, placement check, heartbeat, complete) on a real job store and queue, with one control
// lane and `lanes` render lanes as service/worker/start.ts builds them; only the render-chunk
// handler is a stand-in that starts no Blender ("trivial scene"). It notes when each task's
// handler was entered and when its completion was stored, and every claim's duration, and
// writes them to `outFile` when told to stop (SIGTERM): the benchmark checks from them that
// every task ran exactly once.
import { writeFileSync } from 'node:fs';
import pino from 'pino';
import type { TaskQueue } from '../service/ports/tasks.js';
import { Placement } from '../service/worker/runtime/placement.js';
import { WorkerRuntime, type Lane } from '../service/worker/runtime/runtime.js';
import { openEngine, type EngineSpec } from './scale-engines.js';
import { now, type WorkerRecords } from './scale-stats.js';

export interface WorkerInput {
  spec: EngineSpec;
  /** Render lanes in this process (the control lane comes on top). */
  lanes: number;
  /** Milliseconds each render task's handler takes (0: returns at once). */
  taskMs: number;
  /** Names this process in task leases and the results. */
  name: string;
  /** Where the records go when the process is told to stop. */
  outFile: string;
}

/** `queue`, with every claim timed and the time each completion was stored noted. */
function timedQueue(queue: TaskQueue, records: WorkerRecords): TaskQueue {
  return new Proxy(queue, {
    get(target, prop, receiver) {
      if (prop === 'claim') {
        return async (...args: Parameters<TaskQueue['claim']>) => {
          const t0 = now();
          const task = await target.claim(...args);
          records.claims.push([t0, now() - t0, task?.id ?? '']);
          return task;
        };
      }
      if (prop === 'complete') {
        return async (taskId: string, workerId: string) => {
          const t0 = now();
          await target.complete(taskId, workerId);
          const t = now();
          records.done.push([taskId, t, t - t0]);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

process.once('message', (input: WorkerInput) => {
  void (async () => {
    const engine = await openEngine(input.spec);
    const records: WorkerRecords = { name: input.name, started: [], done: [], claims: [] };
    const queue = timedQueue(engine.queue, records);
    const lanes: Lane[] = [
      { name: 'control', kinds: ['validate', 'render', 'finalize'] },
      ...Array.from({ length: input.lanes }, (_, i) => ({ name: `slot${i}`, kinds: ['render-chunk'] as const })),
    ];
    const runtime = new WorkerRuntime(
      // No Blender builds: placement skips the version check but still reads the job's blocklist, as on a farm.
      { jobs: engine.jobs, queue, log: pino({ level: 'silent' }), placement: new Placement({ queue, builds: [] }) },
      lanes,
      {
        'render-chunk': async (task, ctx) => {
          records.started.push([task.id, now(), task.attempts, ctx.lane.name]);
          if (input.taskMs > 0) await new Promise((r) => setTimeout(r, input.taskMs));
        },
      },
      { workerId: `${input.name}:${process.pid}`, workerName: input.name },
    );
    runtime.start();
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      void (async () => {
        await runtime.stop();
        writeFileSync(input.outFile, JSON.stringify(records));
        await engine.close();
      })()
        .catch((err: unknown) => console.error(err))
        .finally(() => process.exit(0));
    };
    process.once('SIGTERM', stop);
    process.once('disconnect', () => process.exit(1));
    process.send!({ pid: process.pid });
  })().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
});
