// Why a job's frames wait with no live worker able to take them (extension scheduling): the
// workers that hand its frames back say so on the job, so a request the farm cannot satisfy now
// (a tag no live worker has, more memory than any live slot) is told, not left waiting silently.
import { z } from 'zod';
import { DateTime } from './common.js';

export const PlacementNotice = z
  .object({
    /** What no live worker has, e.g. `no live worker has tag site:paris`. */
    reason: z.string(),
    /**
     * Since when (ISO 8601). Checked again against the live workers each time a worker leaves one of
     * the job's frames, so it changes or goes as workers come and go.
     */
    since: DateTime,
  })
  .meta({ id: 'PlacementNotice' });
export type PlacementNotice = z.infer<typeof PlacementNotice>;
