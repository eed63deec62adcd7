// The retention sweeper: once a completed job's `output.scheduledForDeletionAt` has passed, its
// outputs are deleted from storage and the job says `isDeletedForClient: true` (downloads and the
// preview URL go away; the job record itself stays, for history and billing).
import type { Logger } from 'pino';
import type { JobStore, ObjectStorage } from '../ports.js';
import { jobOutputPrefix } from './output-keys.js';

export interface RetentionOptions {
  /** Time between sweeps. Default 600000 ms (10 min): expiry is in days, minutes late is fine. */
  intervalMs?: number;
  /** Jobs handled per sweep step. Default 100. */
  batchSize?: number;
  /** Clock. Default Date.now. */
  now?: () => number;
}

export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private readonly o: Required<RetentionOptions>;

  constructor(
    private readonly deps: { jobs: JobStore; storage: ObjectStorage; log: Logger },
    opts: RetentionOptions = {},
  ) {
    this.o = { intervalMs: opts.intervalMs ?? 600_000, batchSize: opts.batchSize ?? 100, now: opts.now ?? Date.now };
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
  }

  /** One sweep over every expired job; returns how many were deleted. Never runs twice at once. */
  sweep(): Promise<number> {
    this.running ??= this.sweepAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepAll(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const due = await this.deps.jobs.listExpired(new Date(this.o.now()), this.o.batchSize);
      if (due.length === 0) return deleted;
      for (const rec of due) {
        try {
          // Objects first: a crash between the two steps repeats the delete, never hides live files.
          await this.deps.storage.deletePrefix(jobOutputPrefix(rec.job.workspaceId, rec.job.id));
          await this.deps.jobs.update(
            rec.job.id,
            { output: { isDeletedForClient: true, scheduledForDeletionAt: rec.job.output?.scheduledForDeletionAt ?? null } },
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
}
