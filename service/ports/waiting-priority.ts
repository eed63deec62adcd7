// What a worker reads of the queue to decide a preemption (extension scheduling, warm mode): the
// task that the claim order would hand out next, among the kinds a slot claims. Optional on a
// queue: a queue without it (a remote worker's, which reaches the queue over the worker API)
// never preempts.
import type { TaskKind } from './tasks.js';

/** The next task in the claim order: its priority and job. */
export interface WaitingTop {
  priority: number;
  jobId: string;
}

export interface WaitingPriority {
  /**
   * The first task in the claim order among those of `kinds` claimable now (queued, due, not
   * waiting for another task, its job not paused); undefined when none is. A read: it claims
   * nothing. Tasks whose lease ran out are not counted (they are claimed again soon anyway).
   */
  topWaiting(kinds: readonly TaskKind[]): Promise<WaitingTop | undefined>;
}

/** Whether `queue` answers topWaiting. */
export function hasWaitingPriority(queue: object): queue is WaitingPriority {
  return typeof (queue as Partial<WaitingPriority>).topWaiting === 'function';
}
