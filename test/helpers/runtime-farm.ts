// Worker runtimes on the test service's queue, for the tests of where tasks go (placement, memory,
// tags): the runtime, queue and job store are the real ones; the handlers stand in for Blender.
// Timings are short so that a refusal, a retry or a heartbeat shows within a few polls.
import pino from 'pino';
import { afterEach } from 'vitest';
import type { Placement } from '../../service/worker/runtime/placement.js';
import {
  WorkerRuntime,
  type Lane,
  type RuntimeOptions,
  type TaskHandler,
} from '../../service/worker/runtime/runtime.js';
import type { TestService } from './service.js';

type Deps = ConstructorParameters<typeof WorkerRuntime>[0];

export interface FarmRuntime {
  name: string;
  handler: TaskHandler;
  placement: Placement;
  /** The one render lane. Default: `cpu`, without a slot. */
  lane?: Omit<Lane, 'kinds'>;
  /** Parts besides the job store and the queue (memory, oomKills); a given log replaces the silent one. */
  deps?: Partial<Deps>;
  /** Tuning besides the short timings (maxAttempts). */
  options?: RuntimeOptions;
}

const started: WorkerRuntime[] = [];

/** Stops the runtimes a test made after it: one that failed midway must not claim the next test's tasks. */
export function stopFarmRuntimesAfterEach(): void {
  afterEach(async () => void (await Promise.all(started.splice(0).map((r) => r.stop()))));
}

/** A worker runtime named `name` with one lane of render chunks on `svc`'s queue, not started yet. */
export function farmRuntime(svc: TestService, r: FarmRuntime): WorkerRuntime {
  const { jobs, queue } = svc.service.ports;
  const rt = new WorkerRuntime(
    { jobs, queue, log: pino({ level: 'silent' }), placement: r.placement, ...r.deps },
    [{ name: 'cpu', ...r.lane, kinds: ['render-chunk'] }],
    { 'render-chunk': r.handler },
    // refusalDelayMs a multiple of pollMs: without the runtime's jitter the refusing worker's
    // polls phase-lock onto the task's due time and the capable worker can starve.
    {
      workerName: r.name,
      workerId: r.name,
      pollMs: 20,
      heartbeatMs: 50,
      retryBaseMs: 10,
      refusalDelayMs: 40,
      ...r.options,
    },
  );
  started.push(rt);
  return rt;
}

/** Polls `check` until it holds; throws after `ms`. */
export async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}
