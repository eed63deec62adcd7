// The retention sweeper: once a completed job's `output.scheduledForDeletionAt` has passed, its
// outputs are deleted from storage and the job says `isDeletedForClient: true` (downloads and the
// preview URL go away; the job record itself stays, for history and billing). Tasks that finished
// more than `finishedTaskRetentionMs` ago are deleted from the queue in the same sweep, so a farm
// that runs for years does not fill its database or Redis with them.
import type { Logger } from 'pino';
import type { JobRecords } from './ports/jobs.js';
import type { LeaseStore } from './ports/leases.js';
import type { ObjectStorage } from './ports/storage.js';
import type { QueueHousekeeping } from './ports/tasks.js';
import type { WorkerRegistryHousekeeping } from './ports/workers.js';
import { jobOutputPrefix } from './domain/output-keys.js';
import { jobLogPrefix } from './domain/task-log-keys.js';

export interface RetentionOptions {
  /** Time between sweeps. Default 600000 ms (10 min): expiry is in days, minutes late is fine. */
  intervalMs?: number;
  /** Jobs handled per sweep step. Default 100. */
  batchSize?: number;
  /** How long finished tasks stay in the queue. Default 7 days (ServiceConfig.finishedTaskRetentionDays). */
  finishedTaskRetentionMs?: number;
  /** Clock. Default Date.now. */
  now?: () => number;
}

/** Several service instances share one database: only the holder of this lease sweeps. */
export interface SweepLease {
  store: LeaseStore;
  /** This instance's name (ServiceConfig.instanceId). */
  holder: string;
}

export const RETENTION_LEASE = 'retention-sweep';

export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private readonly o: Required<RetentionOptions>;

  constructor(
    private readonly deps: {
      jobs: Pick<JobRecords, 'listExpired' | 'update'>;
      storage: ObjectStorage;
      log: Logger;
      lease?: SweepLease;
      queue?: Pick<QueueHousekeeping, 'pruneFinished'>;
      /** Workers not heard from for a day are forgotten (extension workers). Default none. */
      workerRegistry?: WorkerRegistryHousekeeping;
    },
    opts: RetentionOptions = {},
  ) {
    this.o = {
      intervalMs: opts.intervalMs ?? 600_000,
      batchSize: opts.batchSize ?? 100,
      finishedTaskRetentionMs: opts.finishedTaskRetentionMs ?? 7 * 86_400_000,
      now: opts.now ?? Date.now,
    };
  }

  start(): void {
    const loop = () => {
      this.timer = setTimeout(() => void this.sweep().finally(loop), this.o.intervalMs);
      this.timer.unref();
    };
    void this.sweep().finally(loop);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
    // Hand over at once rather than after the lease runs out.
    const lease = this.deps.lease;
    await lease?.store.release(RETENTION_LEASE, lease.holder).catch(() => undefined);
  }

  /** One sweep over every expired job; returns how many were deleted. Never runs twice at once. */
  sweep(): Promise<number> {
    this.running ??= this.sweepAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepAll(): Promise<number> {
    const lease = this.deps.lease;
    // Held for two intervals: a holder that dies hands over by the next sweep but one.
    if (lease && !(await lease.store.acquire(RETENTION_LEASE, lease.holder, this.o.intervalMs * 2))) return 0;
    await this.pruneTasks();
    await this.deps.workerRegistry
      ?.pruneWorkers(new Date(this.o.now() - 86_400_000))
      .catch((err: unknown) => this.deps.log.error({ err }, 'pruning old workers failed; next sweep retries'));
    let deleted = 0;
    for (;;) {
      const due = await this.deps.jobs.listExpired(new Date(this.o.now()), this.o.batchSize);
      if (due.length === 0) return deleted;
      for (const rec of due) {
        try {
          // Objects first: a crash between the two steps repeats the delete, never hides live files.
          await this.deps.storage.deletePrefix(jobOutputPrefix(rec.job.workspaceId, rec.job.id));
          // Task logs go with the outputs (extension task-logs).
          await this.deps.storage.deletePrefix(jobLogPrefix(rec.job.workspaceId, rec.job.id));
          await this.deps.jobs.update(
            rec.job.id,
            {
              output: {
                isDeletedForClient: true,
                scheduledForDeletionAt: rec.job.output?.scheduledForDeletionAt ?? null,
              },
            },
            { previewKey: null },
          );
          deleted++;
          this.deps.log.info({ jobId: rec.job.id }, 'outputs deleted: retention period over');
        } catch (err) {
          this.deps.log.error({ err, jobId: rec.job.id }, 'deleting expired outputs failed; next sweep retries');
          return deleted;
        }
      }
    }
  }

  /** Deletes the queue's tasks that finished before the retention time, in batches. */
  private async pruneTasks(): Promise<void> {
    const queue = this.deps.queue;
    if (!queue) return;
    const before = new Date(this.o.now() - this.o.finishedTaskRetentionMs);
    let pruned = 0;
    try {
      for (;;) {
        const n = await queue.pruneFinished(before, 500);
        pruned += n;
        if (n < 500) break;
      }
    } catch (err) {
      this.deps.log.error({ err }, 'pruning finished tasks failed; next sweep retries');
    }
    if (pruned > 0)
      this.deps.log.info({ pruned, finishedBefore: before.toISOString() }, 'finished tasks deleted from the queue');
  }
}
