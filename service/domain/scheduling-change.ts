// A change of a job's priority or pause (extension scheduling), as the routes make it. Two stores
// hold it: the job's `scheduling` (what GET /jobs/{id} shows) and the queue (what claims obey).
// The job is written field by field (JobRecords.setSchedulingFields), never as a whole scheduling
// read earlier, so a concurrent change of another field (the planner's `waitingFor`, the preview
// gate, another route) is never undone. Two concurrent changes of the same field may still reach
// the queue in the other order than the job, so each caller tells the queue what the job says
// after its own queue call, and again until they agree: whoever makes the last queue call reads
// the job after every write to it, so the queue ends as the job says.
import type { JobRecord, JobRecords } from '../ports/jobs.js';
import type { TaskScheduling } from '../ports/tasks.js';

/** One change: a priority, or paused / resumed. */
export type SchedulingChange = { priority: number } | { paused: boolean };

/**
 * Rounds of "tell the queue, read the job again" before giving up. Each extra round needs another
 * caller's write of the same field in between, so this is reached only under a storm of them.
 */
const MAX_ROUNDS = 10;

/**
 * Writes `change` onto the job, then brings the queue in line with the job. Undefined when the job
 * is missing. `resumed`: the queue was told to resume the job at least once (new claims may exist).
 */
export async function changeScheduling(
  env: { jobs: Pick<JobRecords, 'getById' | 'setSchedulingFields'>; queue: TaskScheduling },
  jobId: string,
  change: SchedulingChange,
): Promise<{ rec: JobRecord; resumed: boolean } | undefined> {
  const rec = await env.jobs.setSchedulingFields(jobId, change);
  return rec && settleQueue(env, rec, 'priority' in change ? 'priority' : 'paused');
}

/**
 * Tells the queue the job's `field` as `rec` (read after the caller's write of it) says, then reads
 * the job again and tells it again until they agree. `told`: what the caller told the queue already
 * (default nothing), so it is not told twice.
 */
export async function settleQueue(
  env: { jobs: Pick<JobRecords, 'getById'>; queue: TaskScheduling },
  rec: JobRecord,
  field: 'priority' | 'paused',
  told?: number | boolean,
): Promise<{ rec: JobRecord; resumed: boolean }> {
  const jobId = rec.job.id;
  let resumed = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const want = rec.job.scheduling?.[field];
    if (want === undefined || want === told) break;
    if (typeof want === 'number') await env.queue.setJobPriority(jobId, want);
    else if (want) await env.queue.pauseJob(jobId);
    else {
      await env.queue.resumeJob(jobId);
      resumed = true;
    }
    told = want;
    rec = (await env.jobs.getById(jobId)) ?? rec;
  }
  return { rec, resumed };
}
