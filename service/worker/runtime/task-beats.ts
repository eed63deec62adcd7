// The heartbeat of the tasks a worker runs. One timer beats for all of them: each beat reads each
// running task's job once (a warm slot holds two tasks of its job; every slot may render the same
// job) to notice a cancel made in another process, and extends a task's lease once a quarter of it
// has passed since the last extension, a beat early. Each extension is a write on the queue's
// database, or a request to the service for a worker elsewhere: a 30 s lease is extended every
// 7 s, which leaves three extensions of margin, instead of twice a second per task.
import type { Logger } from 'pino';
import type { WorkerJobStore } from '../../ports/jobs.js';
import type { Task, TaskLeases } from '../../ports/tasks.js';
import { CanceledTaskError } from './outcomes.js';

export interface TaskBeatOptions {
  leaseMs: number;
  heartbeatMs: number;
  /** The clock. Default Date.now. */
  now?: () => number;
  /** Beat on a timer every heartbeatMs. Default true; false: whoever owns it calls beat() (tests). */
  timer?: boolean;
}

interface Beating {
  task: Task;
  workerId: string;
  controller: AbortController;
  log: Logger;
  extendedAt: number;
}

export class TaskBeats {
  private readonly live = new Set<Beating>();
  private timer: NodeJS.Timeout | undefined;
  /** One beat at a time: over a slow or failing network they would otherwise pile up. */
  private beating: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly deps: { queue: Pick<TaskLeases, 'extendLease'>; jobs: Pick<WorkerJobStore, 'getById'> },
    private readonly opts: TaskBeatOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Beats for `task` (just claimed) until the returned function is called; aborts
   * `controller` on a cancel or a lost lease.
   */
  start(task: Task, workerId: string, controller: AbortController, log: Logger): () => void {
    const entry: Beating = { task, workerId, controller, log, extendedAt: this.now() };
    this.live.add(entry);
    if (this.opts.timer !== false) this.timer ??= setInterval(() => void this.beat(), this.opts.heartbeatMs);
    return () => {
      this.live.delete(entry);
      if (this.live.size > 0) return;
      clearInterval(this.timer);
      this.timer = undefined;
    };
  }

  /** One beat for every running task (the timer's; a test may call it). */
  beat(): Promise<void> {
    this.beating ??= this.beatAll().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async beatAll(): Promise<void> {
    const byJob = new Map<string, Beating[]>();
    for (const e of this.live)
      if (!e.controller.signal.aborted)
        (byJob.get(e.task.jobId) ?? byJob.set(e.task.jobId, []).get(e.task.jobId)!).push(e);
    await Promise.all([...byJob].map(([jobId, entries]) => this.beatJob(jobId, entries)));
  }

  private async beatJob(jobId: string, entries: Beating[]): Promise<void> {
    try {
      const lost = new Set<Beating>();
      await Promise.all(
        entries.map(async (e) => {
          const now = this.now();
          // A beat early: the next beat may come late, and a short lease (a few beats) is extended every beat.
          if (now - e.extendedAt < this.opts.leaseMs / 4 - this.opts.heartbeatMs) return;
          if (!(await this.deps.queue.extendLease(e.task.id, e.workerId, this.opts.leaseMs))) lost.add(e);
          e.extendedAt = now;
        }),
      );
      const job = await this.deps.jobs.getById(jobId);
      for (const e of entries) {
        if (!lost.has(e) && job && job.job.status !== 'canceled') continue;
        e.log.info({ held: !lost.has(e), status: job?.job.status }, 'stopping task: canceled or lease lost');
        e.controller.abort(new CanceledTaskError(job?.job.status === 'canceled' ? 'job canceled' : 'lease lost'));
      }
    } catch (err) {
      for (const e of entries) e.log.warn({ err }, 'heartbeat failed');
    }
  }
}
