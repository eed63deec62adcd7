// The figures of an estimate (extension estimate) from its measured sample frames: wall time on
// the farm now, compute time, normalizedSeconds, cost, peak memory against each kind of slot,
// output size, each with a band and the number of frames it rests on, and warnings in words.
// Pure: the route gathers the samples, the farm's slots and the queue, and calls this.
import { DEVICE_PERFORMANCE_FACTORS } from './normalized-seconds.js';
import { FRAME_NOISE, profileSum, renderCalls } from './frame-profile.js';

/** A figure with the band it should fall in and the frames (or loads) it rests on. */
export interface Band {
  value: number;
  low: number;
  high: number;
  basis: number;
}

export interface SampleFrame {
  frame: number;
  seconds: number;
  /** Blender's reported peak (RAM on the CPU, device memory on a GPU); null where it printed none. */
  peakMemoryBytes: number | null;
  /** What the frame rendered on, as frame statistics name it (`CPU`, `OPTIX`, ...). */
  device: string;
}

/** One render slot of the farm, as the worker registry knows it. */
export interface FarmSlot {
  kind: 'cpu' | 'gpu';
  /** What one frame may use on it: the GPU's memory, or the machine's RAM; null when unknown. */
  memoryBytes: number | null;
  free: boolean;
  /**
   * Whether it holds this job's Blender as the estimate left it (the scene loaded with the render's
   * settings, kept for the render: estimateWarmKeepSeconds), so the render's frames there load nothing. Default false.
   */
  warm?: boolean;
}

export interface EstimateInput {
  /** The job's frames, in order. */
  frames: readonly number[];
  samples: readonly SampleFrame[];
  /**
   * Every frame the estimate rendered and kept (the samples and the cold frames paired with them): the render skips
   * them. Default: the samples.
   */
  kept?: readonly number[];
  /** Scene load seconds measured (one per Blender that loaded it). */
  loadSeconds: readonly number[];
  /**
   * What a fresh Blender's first frame took beyond a warm one (kernels, images, shaders), one per
   * Blender: each slot the render starts pays it once. Default none.
   */
  warmupSeconds?: readonly number[];
  /**
   * What a render call's first frame took beyond a warm one: each call of the render after a
   * slot's first pays it (EEVEE's setup, 1.3-1.7 s a call here). Default none.
   */
  callSeconds?: readonly number[];
  /**
   * Fixed seconds of the render before its Blenders start: the estimate measures its own wait from
   * its task taken to its Blender's start (the project fetched and unpacked), which each slot of the
   * render pays too, in parallel. On a short job it is much of the wall time. Default 0.
   */
  overheadSeconds?: number;
  /** Frames at which an animated integer property steps (frame-steps.ts): the profile's segments. Default none. */
  steps?: readonly number[];
  /** Output bytes of each sampled frame. */
  outputBytes: readonly number[];
  slots: readonly FarmSlot[];
  /** Seconds of work queued ahead of this job on the farm, per slot. */
  queueAheadSeconds: number;
  /** Operator's price per hour of rendering, by device (`CPU`, `OPTIX`, ..., or `GPU` for any GPU). */
  rates: Readonly<Record<string, number>>;
  /** How long the estimate's Blender waits for the render (estimateWarmKeepSeconds), for the warning's words. */
  warmKeepSeconds?: number;
}

export interface SlotFit {
  kind: 'cpu' | 'gpu';
  /** Smallest memory among slots of this kind (null: unknown). */
  capacityBytes: number | null;
  slots: number;
  fits: 'yes' | 'no' | 'maybe' | 'unknown';
}

export interface EstimateFigures {
  /** Frames the render still renders (the sampled ones are kept). */
  framesToRender: number;
  wallSeconds: Band;
  renderSeconds: Band;
  normalizedSeconds: Band;
  /** Null when the operator configured no rate for the device. */
  cost: Band | null;
  loadSeconds: Band | null;
  outputBytes: Band | null;
  peakMemoryBytes: Band | null;
  slotFits: SlotFit[];
  memorySummary: string;
  /** The device kind the samples rendered on. */
  device: string;
  warnings: string[];
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const scale = (b: Band, f: number, d = 1): Band => ({
  value: round(b.value * f, d),
  low: round(b.low * f, d),
  high: round(b.high * f, d),
  basis: b.basis,
});

/** Mean with a multiplicative band widened by the spread and by few values (as the ETA's). */
export function meanBand(values: readonly number[]): Band | null {
  const v = values.filter((x) => Number.isFinite(x) && x >= 0);
  if (v.length === 0) return null;
  const k = v.length;
  const mean = v.reduce((a, b) => a + b, 0) / k;
  const sd = k > 1 ? Math.sqrt(v.reduce((a, x) => a + (x - mean) ** 2, 0) / (k - 1)) : 0;
  const r = (mean > 0 ? sd / mean : 0) + 1 / Math.sqrt(k);
  return { value: mean, low: mean / (1 + r), high: mean * (1 + r), basis: k };
}

/** Price per hour for `device`: its own rate, else `GPU` for any GPU device, else none. */
export function rateFor(rates: Readonly<Record<string, number>>, device: string): number | undefined {
  return rates[device] ?? (device !== 'CPU' ? rates.GPU : undefined);
}

/** `CPU=0.40,OPTIX=2.5,GPU=2` (per hour) -> a map; throws on a malformed entry, naming it. */
export function parseRates(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z]+)\s*=\s*(\d+(?:\.\d+)?)$/.exec(part);
    if (!m) throw new Error(`"${part}" is not DEVICE=PRICE (e.g. CPU=0.4)`);
    out[m[1]!.toUpperCase()] = Number(m[2]);
  }
  return out;
}

function fitOf(peak: Band | null, capacity: number | null): SlotFit['fits'] {
  if (!peak || capacity === null) return 'unknown';
  if (peak.high <= capacity) return 'yes';
  return peak.value > capacity ? 'no' : 'maybe';
}

const gb = (n: number) => `${round(n / 1024 ** 3, 1)} GB`;

function memoryWords(fits: readonly SlotFit[], peak: Band | null): string {
  if (!peak) return 'Blender reported no peak memory for the sampled frames: memory is not estimated.';
  if (fits.length === 0) return `Peak memory about ${gb(peak.value)}; no render slot is registered to compare it with.`;
  const words = { yes: 'fits', no: 'does not fit', maybe: 'may not fit', unknown: 'cannot be compared with' };
  const parts = fits.map(
    (f) =>
      `${words[f.fits]} the ${f.capacityBytes !== null ? `${gb(f.capacityBytes)} ` : ''}${f.kind.toUpperCase()} slots`,
  );
  return `Peak memory about ${gb(peak.value)} (up to ${gb(peak.high)}): ${parts.join('; ')}.`;
}

/** The estimate's figures from the measured samples; null before any sample is measured. */
export function estimateFigures(input: EstimateInput): EstimateFigures | null {
  const samples = input.samples.filter((s) => Number.isFinite(s.seconds) && s.seconds >= 0);
  if (samples.length === 0) return null;
  const sampled = new Set([...samples.map((s) => s.frame), ...(input.kept ?? [])]);
  const remaining = input.frames.filter((f) => !sampled.has(f));
  // The device most samples rendered on: the render's frames go to slots like theirs.
  const counts = new Map<string, number>();
  for (const s of samples) counts.set(s.device, (counts.get(s.device) ?? 0) + 1);
  const device = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const kind: FarmSlot['kind'] = device === 'CPU' ? 'cpu' : 'gpu';
  const ofKind = input.slots.filter((s) => s.kind === kind);
  const freeSlots = Math.max(1, ofKind.filter((s) => s.free).length);
  const timeline = samples.map((s) => ({ frame: s.frame, seconds: s.seconds }));
  const zero: Band = { value: 0, low: 0, high: 0, basis: samples.length };
  // Compute: every frame left on the line through the samples, one after another.
  const profile = remaining.length ? profileSum(timeline, remaining, input.steps) : null;
  // Each render call after a slot's first pays its setup in its first frame (a slot's first call's is in the warm-up).
  const used = Math.max(1, Math.min(freeSlots, remaining.length));
  const calls = Math.max(0, renderCalls(remaining, freeSlots) - used);
  const setup = calls * (meanBand(input.callSeconds ?? [])?.value ?? 0);
  const sum = profile && { value: profile.value + setup, low: profile.low + setup, high: profile.high + setup };
  const r = FRAME_NOISE + 0.5 / Math.sqrt(samples.length);
  const renderSeconds: Band = sum
    ? {
        value: round(sum.value),
        low: round(Math.min(sum.value, sum.low) / (1 + r)),
        high: round(Math.max(sum.value, sum.high) * (1 + r)),
        basis: samples.length,
      }
    : zero;
  const load = meanBand(input.loadSeconds);
  const warmup = meanBand(input.warmupSeconds ?? []);
  const queue = Math.max(0, input.queueAheadSeconds);
  // Wall: each slot the render uses loads the scene and warms up once, in parallel, then renders
  // its share of the frames; the farm's own fixed time comes on top. The wall is the slowest slot's:
  // only when every free slot (any may take a frame) holds the estimate's kept Blender, and no queued
  // work takes them first, does the render fetch, load and warm up nothing.
  const parallel = Math.max(1, Math.min(freeSlots, remaining.length));
  const free = ofKind.filter((s) => s.free);
  const warmStart = remaining.length > 0 && queue === 0 && free.length > 0 && free.every((s) => s.warm === true);
  const fixed = (edge: 'value' | 'low' | 'high') =>
    queue +
    (warmStart ? 0 : Math.max(0, input.overheadSeconds ?? 0)) +
    (remaining.length > 0 && !warmStart ? (load?.[edge] ?? 0) + (warmup?.[edge] ?? 0) : 0);
  const wallSeconds: Band = sum
    ? {
        value: round(fixed('value') + renderSeconds.value / parallel),
        low: round(fixed('low') + renderSeconds.low / parallel),
        high: round(fixed('high') + renderSeconds.high / parallel),
        basis: samples.length,
      }
    : { ...zero, value: round(queue), low: round(queue), high: round(queue) };
  const factor = DEVICE_PERFORMANCE_FACTORS[device as keyof typeof DEVICE_PERFORMANCE_FACTORS] ?? 1;
  const rate = rateFor(input.rates, device);
  const peaks = samples.map((s) => s.peakMemoryBytes).filter((p): p is number => p !== null && p > 0);
  const peakMean = meanBand(peaks);
  // The highest sample is the figure; the band reaches above it by the peaks' spread (never more than double).
  const peakMemoryBytes: Band | null = peakMean
    ? {
        value: Math.max(...peaks),
        low: Math.max(...peaks),
        high: Math.round(
          Math.max(...peaks) * Math.min(2, 1 + (peakMean.high - peakMean.value) / Math.max(1, peakMean.value)),
        ),
        basis: peaks.length,
      }
    : null;
  const slotFits: SlotFit[] = (['gpu', 'cpu'] as const)
    .map((k) => {
      const of = input.slots.filter((s) => s.kind === k);
      const caps = of.map((s) => s.memoryBytes).filter((m): m is number => m !== null);
      return {
        kind: k,
        capacityBytes: caps.length ? Math.min(...caps) : null,
        slots: of.length,
        fits: 'unknown' as SlotFit['fits'],
      };
    })
    .filter((f) => f.slots > 0)
    .map((f) => ({ ...f, fits: fitOf(peakMemoryBytes, f.capacityBytes) }));
  const out = meanBand(input.outputBytes);
  const outputBytes = out ? scale(out, input.frames.length, 0) : null;
  return {
    framesToRender: remaining.length,
    wallSeconds,
    renderSeconds,
    normalizedSeconds: scale(renderSeconds, factor),
    cost: rate !== undefined ? scale(renderSeconds, rate / 3600, 2) : null,
    loadSeconds: load ? scale(load, 1) : null,
    outputBytes,
    peakMemoryBytes,
    slotFits,
    memorySummary: memoryWords(slotFits, peakMemoryBytes),
    device,
    warnings: estimateWarnings(samples, slotFits, {
      queue,
      free: free.length > 0,
      kind,
      rate: rate !== undefined,
      device,
      warmKeep: warmStart ? (input.warmKeepSeconds ?? null) : undefined,
    }),
  };
}

function estimateWarnings(
  samples: readonly SampleFrame[],
  fits: readonly SlotFit[],
  farm: { queue: number; free: boolean; kind: string; rate: boolean; device: string; warmKeep?: number | null },
): string[] {
  const w: string[] = [];
  const secs = samples.map((s) => s.seconds);
  const ratio = Math.max(...secs) / Math.max(1e-6, Math.min(...secs));
  if (samples.length < 3)
    w.push(`The estimate rests on ${samples.length} frame${samples.length === 1 ? '' : 's'} only: the band is wide.`);
  if (ratio >= 2) w.push(`Frame times vary ${Math.round(ratio * 10) / 10}x along the timeline: the band is wide.`);
  const own = fits.find((f) => f.kind === farm.kind);
  if (own?.fits === 'no') {
    const other = fits.find((f) => f.kind !== farm.kind && f.fits === 'yes');
    w.push(
      `The peak memory does not fit the ${farm.kind.toUpperCase()} slots the samples rendered on: the render ` +
        `would fail for memory there${other ? `; it fits the ${other.kind.toUpperCase()} slots` : ''}.`,
    );
  }
  if (!farm.free)
    w.push(
      `No ${farm.kind.toUpperCase()} slot is free now: the wall time counts ${Math.round(farm.queue)} s of ` +
        `queued work ahead.`,
    );
  if (farm.warmKeep !== undefined)
    w.push(
      `The wall time counts no scene load: it assumes the render starts while the estimate's Blender waits ` +
        `for it on its slot${farm.warmKeep !== null ? ` (${Math.round(farm.warmKeep)} s after the estimate)` : ''}; ` +
        `later, the load comes back.`,
    );
  if (!farm.rate)
    w.push(`No price is configured for ${farm.device} rendering (--estimate-rates): the cost is not estimated.`);
  return w;
}
