// Why a job's frames wait after a preemption (extension scheduling, preemptPriorityGap): a warm
// slot handed the job's task back at a frame boundary to a higher-priority job. The worker that
// hands it back says so on the job; the worker that runs the task again clears it.
import { z } from 'zod';
import { DateTime } from './common.js';

export const PreemptionNotice = z
  .object({
    /** E.g. `paused for a priority-90 job after frame 12` (or `before frame 1`: none was done). */
    reason: z.string(),
    /** The priority of the job that took the slot. */
    priority: z.int(),
    /** The job's last frame finished before the hand-back; null when the task had finished none. */
    afterFrame: z.int().nullable(),
    /** When the latest hand-back happened (ISO 8601). */
    since: DateTime,
    /** The tasks handed back and not running again yet (their frames wait in the queue). */
    tasks: z.array(z.string()),
  })
  .meta({ id: 'PreemptionNotice' });
export type PreemptionNotice = z.infer<typeof PreemptionNotice>;
