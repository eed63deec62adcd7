// The scheduling extension's reads of the farm's queue for people: how much is claimed before a
// job's next frame (GET /jobs/{id}/queue-ahead) and how the farm's slot time is shared now between
// workspaces and their submitters (GET /farm/share). Both describe one instant: the queue moves
// with every claim, a new job of higher priority or with a smaller share goes in ahead.
import { z } from 'zod';
import { DateTime, Uuid } from './common.js';

export const QueueAhead = z
  .object({
    jobId: Uuid,
    /**
     * Whether a frame of the job waits in the queue now. False: nothing of it waits (not planned yet,
     * every frame claimed, paused, held for approval or its dependencies, or ended); the counts are 0.
     */
    waiting: z.boolean(),
    /** Frames of other jobs claimed before the job's next one, if nothing new comes. */
    framesAhead: z.int().min(0),
    /** The jobs those frames belong to (of every workspace: counts only). */
    jobsAhead: z.int().min(0),
    /** Render slots of live workers now. */
    liveSlots: z.int().min(0),
    /**
     * Seconds until the job's next frame starts: framesAhead x the measured seconds per frame of the
     * frames waiting / liveSlots. Null while it cannot be told: no frame measured yet, or no live slot.
     */
    expectedWaitSeconds: z.number().min(0).nullable(),
    generatedAt: DateTime,
  })
  .meta({ id: 'QueueAhead' });
export type QueueAhead = z.infer<typeof QueueAhead>;

export const QueueAheadEnvelope = z.object({ data: QueueAhead }).meta({ id: 'QueueAheadEnvelope' });

/** One fair-share group: a workspace's submitter (a user), or a workspace's total. */
export const ShareRow = z.object({
  /**
   * The user id of the submitter (jobs' userId); null on a workspace's total row. Another workspace's
   * users are not named: one row per other workspace, its total.
   */
  userId: z.string().nullable(),
  /**
   * Who the submitter is to people: the labels of the user's API keys (its active keys', else its
   * revoked ones'), joined by ", "; null on a workspace's total row, and for a user with no key left
   * (show userId then). Only for the caller's own workspace's submitters.
   */
  label: z.string().nullable(),
  /** The weight its frames are tagged with (the operator's; 1 without one). */
  weight: z.number().positive(),
  /** Its share of the weights of the groups with frames waiting or running now (0-1). */
  entitledShare: z.number().min(0).max(1),
  /** Render slots its frames hold now. */
  runningSlots: z.int().min(0),
  /** runningSlots / the busy render slots of the farm (0-1): its current share of slot time. */
  currentShare: z.number().min(0).max(1),
  /** Frames waiting to be claimed (paused jobs' not counted). */
  waitingFrames: z.int().min(0),
  /** Frames of its paused jobs. */
  pausedFrames: z.int().min(0),
  /** Measured slot seconds per frame; null while none of its frames finished. */
  secondsPerFrame: z.number().min(0).nullable(),
});

export const WorkspaceShare = ShareRow.extend({
  /** This workspace's id; null for another workspace (its name and users are not shown). */
  workspaceId: Uuid.nullable(),
  own: z.boolean(),
  /** Its submitters (own workspace only; empty for another's). */
  submitters: z.array(ShareRow),
}).meta({ id: 'WorkspaceShare' });
export type WorkspaceShare = z.infer<typeof WorkspaceShare>;

export const FarmShare = z
  .object({
    data: z.object({
      /** Workspaces with frames waiting, paused or running, the caller's first, then by current share. */
      workspaces: z.array(WorkspaceShare),
      liveSlots: z.int().min(0),
      busySlots: z.int().min(0),
      generatedAt: DateTime,
    }),
  })
  .meta({ id: 'FarmShare' });
export type FarmShare = z.infer<typeof FarmShare>;
