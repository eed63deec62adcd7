// A task can reach a worker before its job has moved: POST /validate and POST /render enqueue the
// task first and then move the job (a crash in between leaves a task the worker drops, never a
// job waiting for no task), and a worker woken at once by the enqueue (BullMQ, PostgreSQL
// NOTIFY) may claim the task in between. Dropping it then left the job waiting for ever.
import type { JobStatus } from '../../../shared/job-status.js';
import type { JobRecord, WorkerJobStore } from '../../ports/jobs.js';

/** How often the job is read again, and for how long at most: the route's move takes milliseconds. */
const EVERY_MS = 25;
const AT_MOST_MS = 5000;

/**
 * The job as read, or, while it is still in `from` (its route has not moved it yet), as read
 * again once it has left `from`; after AT_MOST_MS the last read (the route died before its move).
 */
export async function afterMoveFrom(
  jobs: Pick<WorkerJobStore, 'getById'>,
  id: string,
  from: JobStatus,
  signal: AbortSignal,
): Promise<JobRecord | undefined> {
  const deadline = Date.now() + AT_MOST_MS;
  let rec = await jobs.getById(id);
  while (rec?.job.status === from && Date.now() < deadline && !signal.aborted) {
    await new Promise((r) => setTimeout(r, EVERY_MS));
    rec = await jobs.getById(id);
  }
  return rec;
}
