// What moves from an estimate's own cost (extension estimate: `ownCost`) to the job's bill when
// the render takes over the estimate's warm Blender (worker/render/estimate-handover.ts): the
// scene load and the shader/first-frame warm-up that Blender paid, which the render would have
// paid in a Blender of its own and does not pay again. Moved, not added: the estimate's and the
// job's billed seconds together stay what they were. Pure.
import { LEAD_FRAMES } from './estimate-samples.js';
import { normalizedSeconds, type RenderRun } from './normalized-seconds.js';

/** What the estimate's lead measured (estimate-samples.ts leadCosts), kept for the handover. */
export interface LeadWarmup {
  /** The cold frames' excess over twice the warm third: the warm-up each fresh Blender pays. */
  warmupSeconds: number;
  /** The lead frames' own times, in order (the cold ones first). */
  leadSeconds: readonly number[];
}

/**
 * The warm-up the render takes over: the measured excess, never negative, never more than the cold
 * lead frames took themselves (a noisy warm frame cannot make it more), 0 where none was measured.
 */
export function takenWarmup(lead: LeadWarmup | null | undefined): number {
  if (!lead || !Number.isFinite(lead.warmupSeconds)) return 0;
  const cold = lead.leadSeconds.slice(0, LEAD_FRAMES - 1).reduce((s, x) => s + Math.max(0, x), 0);
  return Math.max(0, Math.min(lead.warmupSeconds, cold));
}

const round1 = (n: number) => Math.max(0, Math.round(n * 10) / 10);

export interface Takeover {
  /** The warm-up billed to the job, at the device the load billed (0: nothing to bill). */
  warmup: RenderRun;
  /** The estimate's own seconds and normalized seconds once the load and warm-up are off them. */
  ownSeconds: number;
  ownNormalizedSeconds: number;
}

/**
 * The estimate's own cost less the load (`load`, billed to the job already) and the warm-up: the
 * warm-up moved is at most what the load left of the estimate's own seconds, so the two bills
 * together never change. Null where the estimate was taken over already: nothing moves twice.
 */
export function takeover(
  own: { ownSeconds?: number; ownNormalizedSeconds?: number; takenOver?: boolean },
  load: RenderRun,
  lead: LeadWarmup | null | undefined,
): Takeover | null {
  // Once: a second render run in the same Blender found its load and warm-up paid already.
  if (own.takenOver) return null;
  const left = Math.max(0, (own.ownSeconds ?? 0) - Math.max(0, load.seconds));
  const seconds = Math.min(takenWarmup(lead), left);
  const warmup: RenderRun = { ...load, seconds };
  return {
    warmup,
    ownSeconds: round1(left - seconds),
    ownNormalizedSeconds: round1((own.ownNormalizedSeconds ?? 0) - normalizedSeconds([load, warmup])),
  };
}
