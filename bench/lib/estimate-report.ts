// bench:estimate's arithmetic: each scene's errors against the truth of its full render, the
// Blendergrid method on the same samples, and the verdicts against issue 28's targets.
import type { SceneRun } from './estimate-run.js';
import { median, verdict, type Row } from './results.js';

export interface SceneErrors {
  name: string;
  frames: number;
  /** Wall time: ours (value and band), Blendergrid's, the truth. */
  truthWall: number;
  ours: { value: number; low: number; high: number };
  oursError: number;
  inBand: boolean;
  blendergrid: number;
  blendergridError: number;
  /**
   * Peak memory: the truth (the render's own frames), ours from the samples, Blendergrid's (its
   * 3 frames), the analysis alone.
   */
  truthPeak: number | null;
  samplePeakError: number | null;
  blendergridPeakError: number | null;
  analysisError: number | null;
  analysisInBand: boolean | null;
  /** The estimate's own Blender seconds over the render's wall, and its own wall. */
  costShare: number;
  /**
   * The estimate's own seconds, less the load and warm-up its render took over, over the full
   * render: the render's wall plus the seconds of the frames the estimate kept (the lead's warm-up
   * among them) and the load the render took over (without the estimate the render would have paid both).
   */
  fullRender: number;
  /** The scene load and warm-up the render took over with the estimate's warm Blender, seconds (0: none). */
  takenOver: number;
  costShareFull: number;
  estimateWall: number;
  /** The live ETA at 25 %: its error against the time really left then. */
  etaError: number | null;
  etaInBand: boolean | null;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const err = (est: number, truth: number) => est / truth - 1;
const maxOf = (xs: readonly (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
};

/**
 * The estimate's warm samples, from the frames it kept in the order it rendered them
 * (service/domain/estimate-samples.ts): on a job of 12 frames or more, the lead's first two are cold
 * and its third warm, and the next frame (the stepped call's first) measures the call's setup.
 */
export function estimateSamples(r: SceneRun): { lead: number | undefined; samples: number[] } {
  const kept = r.estimate.sampleFrames;
  if (r.scene.frames < 12) return { lead: undefined, samples: [...kept] };
  return { lead: kept[0], samples: kept.filter((_, i) => i === 2 || i > 3) };
}

/**
 * Blendergrid's frames: first, middle and last of the job, from the estimate's warm samples (the
 * sample nearest each): its method on the same samples, without our profile, warm-up or band.
 */
export function blendergridFrames(r: SceneRun): number[] {
  const { samples } = estimateSamples(r);
  const total = r.scene.frames;
  const nearest = (at: number) => samples.reduce((a, b) => (Math.abs(b - at) < Math.abs(a - at) ? b : a));
  return [...new Set([1, Math.floor((total + 1) / 2), total].map(nearest))];
}

/**
 * Blendergrid's method: 3 frames (first, middle, last), their mean time scaled to every
 * frame left, plus the load; no band.
 */
export function blendergridWall(r: SceneRun): number {
  const f = r.estimate.figures!;
  const first3 = blendergridFrames(r);
  const secs = r.sampleRows.filter((x) => first3.includes(x.frame)).map((x) => x.renderSeconds);
  return f.queueAheadSeconds + (f.loadSeconds?.value ?? 0) + mean(secs) * f.framesToRender;
}

export function sceneErrors(r: SceneRun): SceneErrors {
  const f = r.estimate.figures!;
  const truthPeak = maxOf(r.renderRows.map((x) => x.peakMemoryBytes));
  const first3 = blendergridFrames(r);
  const bgPeak = maxOf(r.sampleRows.filter((x) => first3.includes(x.frame)).map((x) => x.peakMemoryBytes));
  const bg = blendergridWall(r);
  const a = r.analysis;
  const eta = r.eta25?.eta;
  const left = r.eta25 ? r.renderWall - r.eta25.at : NaN;
  // The load and the warm-up the render took over with the estimate's Blender (the drop of ownCost).
  const takenOver = Math.max(0, r.estimate.ownCost.renderSeconds - r.ownAfterRender);
  // The full render adds only the load: the warm-up is in the kept lead frames' rows already.
  const loadTaken = Math.min(takenOver, f.loadSeconds?.value ?? 0);
  const fullRender = r.renderWall + r.sampleRows.reduce((a, x) => a + x.renderSeconds, 0) + loadTaken;
  return {
    name: r.scene.name,
    frames: r.scene.frames,
    truthWall: r.renderWall,
    ours: f.wallSeconds,
    oursError: err(f.wallSeconds.value, r.renderWall),
    inBand: f.wallSeconds.low <= r.renderWall && r.renderWall <= f.wallSeconds.high,
    blendergrid: bg,
    blendergridError: err(bg, r.renderWall),
    truthPeak,
    samplePeakError: truthPeak && f.peakMemoryBytes ? err(f.peakMemoryBytes.value, truthPeak) : null,
    blendergridPeakError: truthPeak && bgPeak ? err(bgPeak, truthPeak) : null,
    analysisError: truthPeak && a ? err(a.bytes, truthPeak) : null,
    analysisInBand:
      truthPeak && a && a.low !== null && a.high !== null ? a.low <= truthPeak && truthPeak <= a.high : null,
    costShare: r.estimate.ownCost.renderSeconds / r.renderWall,
    takenOver,
    fullRender,
    costShareFull: r.ownAfterRender / fullRender,
    estimateWall: r.estimateWall,
    etaError: eta && left > 0 ? err(eta.seconds, left) : null,
    etaInBand: eta && left > 0 ? eta.lowSeconds <= left && left <= eta.highSeconds : null,
  };
}

const pct = (x: number | null) =>
  x === null || !Number.isFinite(x) ? 'n/a' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;
const s1 = (n: number) => n.toFixed(1);
const mib = (n: number | null) => (n === null ? 'n/a' : (n / 2 ** 20).toFixed(1));

export function sceneRows(
  runs: readonly SceneRun[],
  errs: readonly SceneErrors[],
): { time: Row[]; memory: Row[]; cost: Row[]; parts: Row[] } {
  const time = errs.map((e, i) => ({
    scene: e.name,
    frames: String(e.frames),
    'sampled frames': runs[i]!.estimate.sampleFrames.join(', '),
    'render wall s (truth)': s1(e.truthWall),
    'ours s [band]': `${s1(e.ours.value)} [${s1(e.ours.low)}-${s1(e.ours.high)}]`,
    'ours error': pct(e.oursError),
    'truth in band': e.inBand ? 'yes' : 'no',
    'Blendergrid s': s1(e.blendergrid),
    'Blendergrid error': pct(e.blendergridError),
    'ETA at 25 %: error': pct(e.etaError),
    'ETA in its band': e.etaInBand === null ? 'n/a' : e.etaInBand ? 'yes' : 'no',
  }));
  const memory = errs.map((e, i) => {
    const a = runs[i]!.analysis;
    return {
      scene: e.name,
      'peak MiB (truth)': mib(e.truthPeak),
      'ours (samples) MiB': mib(runs[i]!.estimate.figures!.peakMemoryBytes?.value ?? null),
      'ours error': pct(e.samplePeakError),
      'Blendergrid (3 frames) error': pct(e.blendergridPeakError),
      'analysis MiB [band]': a
        ? `${mib(a.bytes)}${a.low !== null && a.high !== null ? ` [${mib(a.low)}-${mib(a.high)}]` : ''}`
        : 'n/a',
      'analysis error': pct(e.analysisError),
      'truth in analysis band': e.analysisInBand === null ? 'n/a' : e.analysisInBand ? 'yes' : 'no',
    };
  });
  const cost = errs.map((e, i) => ({
    scene: e.name,
    frames: String(e.frames),
    'estimate own Blender s': s1(runs[i]!.estimate.ownCost.renderSeconds),
    'load + warm-up taken over s': s1(e.takenOver),
    'estimate wall s': s1(e.estimateWall),
    'render wall s': s1(e.truthWall),
    'own / render wall (old)': pct(e.costShare).replace('+', ''),
    'full render s': s1(e.fullRender),
    'own (less load, warm-up taken over) / full render': pct(e.costShareFull).replace('+', ''),
  }));
  const parts = runs.map((r) => {
    const e = r.estimate;
    const row = (f: number | undefined) => r.sampleRows.find((x) => x.frame === f)?.renderSeconds;
    const { lead, samples } = estimateSamples(r);
    const cold = row(lead);
    const warm = row(samples[0]);
    return {
      scene: r.scene.name,
      'estimate: load s': s1(e.figures!.loadSeconds?.value ?? 0),
      'cold lead frame s': cold === undefined ? 'n/a' : s1(cold),
      'first warm sample s': warm === undefined ? 'n/a' : s1(warm),
      'render: to its first frame s': s1(r.firstFrameAt),
      'its frames s': s1(r.lastFrameAt - r.firstFrameAt),
      'after its last frame s': s1(r.renderWall - r.lastFrameAt),
      'frame s, sum of rows': s1(r.renderRows.reduce((a, x) => a + x.renderSeconds, 0)),
    };
  });
  return { time, memory, cost, parts };
}

export function verdicts(errs: readonly SceneErrors[]): { rows: Row[]; pass: boolean } {
  const abs = errs.map((e) => Math.abs(e.oursError));
  const bgAbs = errs.map((e) => Math.abs(e.blendergridError));
  const inBand = errs.filter((e) => e.inBand).length;
  const samplePeak = errs
    .map((e) => e.samplePeakError)
    .filter((x): x is number => x !== null)
    .map(Math.abs);
  const analysisOk = errs.filter((e) => e.analysisError !== null && Math.abs(e.analysisError) <= 0.3).length;
  const long = errs.filter((e) => e.frames >= 100);
  const costWorst = Math.max(...long.map((e) => e.costShareFull));
  const costWorstOld = Math.max(...long.map((e) => e.costShare));
  const wallWorst = Math.max(...long.map((e) => e.estimateWall));
  const eta = errs
    .map((e) => e.etaError)
    .filter((x): x is number => x !== null)
    .map(Math.abs);
  const need = Math.max(1, errs.length - 1);
  const rows: { target: string; ours: string; Blendergrid: string; goal: string; ok: boolean }[] = [
    {
      target: 'wall time, median error',
      ours: pct(median(abs)).replace('+', ''),
      Blendergrid: pct(median(bgAbs)).replace('+', ''),
      goal: '<= 10%',
      ok: median(abs) <= 0.1,
    },
    {
      target: 'wall time, worst error',
      ours: pct(Math.max(...abs)).replace('+', ''),
      Blendergrid: pct(Math.max(...bgAbs)).replace('+', ''),
      goal: '<= 25%',
      ok: Math.max(...abs) <= 0.25,
    },
    {
      target: 'truth inside the band',
      ours: `${inBand} of ${errs.length}`,
      Blendergrid: 'no band',
      goal: `>= ${need} of ${errs.length}`,
      ok: inBand >= need,
    },
    {
      target: 'peak memory from sample frames, worst error',
      ours: pct(Math.max(...samplePeak)).replace('+', ''),
      Blendergrid: '',
      goal: '<= 15%',
      ok: samplePeak.length > 0 && Math.max(...samplePeak) <= 0.15,
    },
    {
      target: 'peak memory from analysis alone, within 30%',
      ours: `${analysisOk} of ${errs.length}`,
      Blendergrid: 'none',
      goal: `>= ${need} of ${errs.length}`,
      ok: analysisOk >= need,
    },
    {
      target: 'estimate cost, 100+ frame jobs: own Blender s / full render',
      ours: `${pct(costWorst).replace('+', '')} (over the render's wall alone: ${pct(costWorstOld).replace('+', '')})`,
      Blendergrid: '',
      goal: '<= 10%',
      ok: costWorst <= 0.1,
    },
    {
      target: 'estimate wall, 100+ frame jobs (worst)',
      ours: `${s1(wallWorst)} s`,
      Blendergrid: '',
      goal: '< 60 s',
      ok: wallWorst < 60,
    },
    {
      target: 'live ETA at 25 % of frames, worst error vs time left',
      ours: eta.length ? pct(Math.max(...eta)).replace('+', '') : 'n/a',
      Blendergrid: 'none',
      goal: '<= 10%',
      ok: eta.length === errs.length && Math.max(...eta) <= 0.1,
    },
  ];
  return { rows: rows.map(({ ok, ...r }) => ({ ...r, verdict: verdict(ok) })), pass: rows.every((r) => r.ok) };
}
