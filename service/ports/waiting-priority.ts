// What a worker reads of the queue to decide a preemption (extension scheduling, warm mode): the
// task that the claim order would hand out next, among the kinds a slot claims, and the places to
// hand a slot back for it. Optional on a queue: a queue without it never preempts. A remote
// worker's queue reaches both through the worker API (service/worker-api/waiting-routes.ts).
import type { TaskKind } from './tasks.js';

/** The next task in the claim order: its priority and job. */
export interface WaitingTop {
  priority: number;
  jobId: string;
  /**
   * The tags the job requires (scheduling.requiredTags), where the answer carries them: the worker
   * API's does, since a remote worker may not read a job it holds no task of. Absent: read the job.
   */
  requiredTags?: string[];
}

/** Hand-back places are counted up to this many tasks of one job: more than any farm frees at once. */
export const MAX_HAND_BACK_PLACES = 64;

/** How long a hand-back place stays taken by default: the slot claims the waiting task well within it. */
export const HAND_BACK_PLACE_MS = 15_000;

export interface WaitingPriority {
  /**
   * The first task in the claim order among those of `kinds` claimable now (queued, due, not
   * waiting for another task, its job not paused); undefined when none is. A read: it claims
   * nothing. Tasks whose lease ran out are not counted (they are claimed again soon anyway).
   */
  topWaiting(kinds: readonly TaskKind[]): Promise<WaitingTop | undefined>;
  /**
   * Takes one place to hand a slot back for `jobId`'s waiting tasks, for `holder` (a slot), for
   * `ttlMs`: a job has as many places as it has tasks of `kinds` queued and due (at most
   * MAX_HAND_BACK_PLACES), shared by every worker of the queue. True when a place was free (or
   * `holder` held one already); false when every place is taken, so that several slots never hand
   * back more than the waiting tasks can use. A place is freed by its time running out.
   */
  takeHandBackPlace(jobId: string, kinds: readonly TaskKind[], holder: string, ttlMs: number): Promise<boolean>;
}

/** Whether `queue` answers topWaiting and takeHandBackPlace. */
export function hasWaitingPriority(queue: object): queue is WaitingPriority {
  const q = queue as Partial<WaitingPriority>;
  return typeof q.topWaiting === 'function' && typeof q.takeHandBackPlace === 'function';
}
