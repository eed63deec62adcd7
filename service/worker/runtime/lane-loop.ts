// One lane's claim loop: claim a task of the lane's kinds, run it, claim the next. A lane of
// depth > 1 (a warm slot) claims its next task as soon as the running one says its work is handed
// to the device, never before, so the device goes on without waiting for the queue.
import type { Task } from '../../ports/tasks.js';
import type { IdleLanes } from './idle-lanes.js';
import type { Lane } from './runtime.js';

export interface LaneLoopDeps {
  /** The lane's id in task leases (`worker:lane`). */
  workerId: string;
  idle: IdleLanes;
  /** Idle poll period of an empty queue (RuntimeOptions.pollMs). */
  pollMs: number;
  claim: () => Promise<Task | undefined>;
  /** Runs a claimed task; `handedOff` lets a deep lane claim its next one. */
  run: (task: Task, handedOff: () => void) => Promise<void>;
  stopping: () => boolean;
  onClaimError: (err: unknown) => void;
}

/** Claims and runs the lane's tasks until the runtime stops; resolves once its last task ended. */
export async function laneLoop(lane: Lane, d: LaneLoopDeps): Promise<void> {
  const depth = Math.max(1, Math.trunc(lane.depth ?? 1));
  const inFlight = new Set<Promise<void>>();
  while (!d.stopping()) {
    if (inFlight.size >= depth) {
      await Promise.race(inFlight);
      continue;
    }
    let task: Task | undefined;
    try {
      task = await d.idle.claiming(lane.kinds, d.claim);
    } catch (err) {
      d.onClaimError(err);
    }
    if (!task) {
      // A task ending frees room too: claim again at once, not at the next poll. The period is
      // jittered (0.5x to 1.5x): workers woken by the same signal otherwise poll in lockstep, and
      // at a task's due time the same one always claims first (a blocklisted slot that takes a
      // task back every time starved the one slot able to run it).
      const pollMs = Math.round(d.pollMs * (0.5 + Math.random()));
      await d.idle.wait(lane.kinds, pollMs, inFlight.size > 0 ? Promise.race(inFlight) : undefined);
      continue;
    }
    let handOff!: () => void;
    const handedOff = new Promise<void>((resolve) => (handOff = resolve));
    const running: Promise<void> = d
      .run(task, () => handOff())
      .finally(() => {
        inFlight.delete(running);
        handOff();
      });
    inFlight.add(running);
    await handedOff;
  }
  await Promise.all(inFlight);
}
