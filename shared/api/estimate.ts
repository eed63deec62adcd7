// The estimate extension's bodies: POST /jobs/{id}/estimate starts one on a `validated` job
// (with the render's own `requestedRenderConfig`), GET reads it, DELETE cancels it. One estimate
// per job: a repeated POST answers the same one. The job stays `validated` throughout.
import { z } from 'zod';
import { DateTime } from './common.js';
import { RequestedConfig } from './render-config.js';

/** A figure with the band it should fall in, and what it rests on. */
export const EstimateBand = z
  .object({
    value: z.number().min(0),
    low: z.number().min(0),
    high: z.number().min(0),
    /** Sampled frames the figure rests on (for load time: scene loads). */
    frames: z.int().min(0),
  })
  .meta({ id: 'EstimateBand' });
export type EstimateBand = z.infer<typeof EstimateBand>;

export const EstimateSlotFit = z
  .object({
    kind: z.enum(['cpu', 'gpu']),
    /** The smallest memory among the farm's slots of this kind (GPU memory; RAM for CPU slots); null: unknown. */
    capacityBytes: z.number().min(0).nullable(),
    slots: z.int().min(0),
    /** `maybe`: the peak fits, its band's top does not. */
    fits: z.enum(['yes', 'no', 'maybe', 'unknown']),
  })
  .meta({ id: 'EstimateSlotFit' });

export const EstimateFigures = z
  .object({
    /** What the samples rendered on (`CPU`, `OPTIX`, ...): the figures are for slots like theirs. */
    device: z.string(),
    /** Frames the render still renders: the job's frames less the sampled ones it keeps. */
    framesToRender: z.int().min(0),
    /**
     * From POST /render to the last frame on this farm now: the queue ahead, a scene load,
     * the frames over the free slots.
     */
    wallSeconds: EstimateBand,
    /** Render seconds of the frames left, one after another. */
    renderSeconds: EstimateBand,
    /** renderSeconds made comparable across devices, as billing counts them (docs/reference/api-decisions.md). */
    normalizedSeconds: EstimateBand,
    /** At the operator's price per hour for the device (setting estimateRates); null when none is set. */
    cost: EstimateBand.nullable(),
    /** Seconds Blender took to load the scene before a frame. */
    loadSeconds: EstimateBand.nullable(),
    /** Bytes of every frame's files together. */
    outputBytes: EstimateBand.nullable(),
    /** Blender's reported peak per frame (RAM on a CPU, device memory on a GPU); null where it printed none. */
    peakMemoryBytes: EstimateBand.nullable(),
    memory: z.object({
      /**
       * In words: "Peak memory about 9.1 GB (up to 10.2 GB): does not fit the 8 GB GPU
       * slots; fits the 64 GB CPU slots."
       */
      summary: z.string(),
      slots: z.array(EstimateSlotFit),
    }),
    /** Seconds of queued work ahead of the job per slot of its kind, counted into wallSeconds. */
    queueAheadSeconds: z.number().min(0),
  })
  .meta({ id: 'EstimateFigures' });

export const Estimate = z
  .object({
    jobId: z.string(),
    /** `sampling`: frames render; `ready`: figures final; `failed`: `reason` says why; `canceled`. */
    state: z.enum(['sampling', 'ready', 'failed', 'canceled']),
    requestedRenderConfig: RequestedConfig,
    /** One sentence when the estimate could not be made (the scene fails to load, no worker has a fitting build). */
    reason: z.string().nullable(),
    /**
     * Frames rendered for the estimate, kept: a render with the same requestedRenderConfig does not render them again.
     */
    sampleFrames: z.array(z.int()),
    /** The job's frames under this request; null until a worker resolved them. */
    framesTotal: z.int().min(0).nullable(),
    /** Null until the first sampled frame is measured; refined until `ready`. */
    figures: EstimateFigures.nullable(),
    /** What the estimate itself took: its Blender runs' seconds, normalized seconds and cost (null without a price). */
    ownCost: z.object({
      renderSeconds: z.number().min(0),
      normalizedSeconds: z.number().min(0),
      cost: z.number().min(0).nullable(),
    }),
    /** In words, e.g. "Frame times vary 5x along the timeline: the band is wide." */
    warnings: z.array(z.string()),
    startedAt: DateTime,
    finishedAt: DateTime.nullable(),
  })
  .meta({ id: 'Estimate' });
export type Estimate = z.infer<typeof Estimate>;

export const EstimateEnvelope = z.object({ data: Estimate }).meta({ id: 'EstimateEnvelope' });
export type EstimateEnvelope = z.infer<typeof EstimateEnvelope>;
