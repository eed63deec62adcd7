// The union of frame ranges as what it costs to hold, never as the frame space. Requests name up
// to 100 ranges of up to a million frames each, and every check on them (how many frames, which
// belong to a job) runs on the request path: its cost must follow the ranges and the job, not
// the frames the ranges could name. 100 copies of "0-1048574" are one interval.

/** One parsed range: `start..end` inclusive, every `step`-th frame. */
export interface FrameRangeSpec {
  start: number;
  end: number;
  step: number;
}

/** Blender's highest frame number (MAXFRAME), as in the FrameRange schema. */
export const MAX_FRAME = 1_048_574;

const RANGE_RE = /^\s*(\d{1,7})(?:\s*-\s*(\d{1,7})(?:\s*x\s*(\d{1,7}))?)?\s*$/;

/** Parses one range; throws a RangeError naming the bad text (the API schema rejects these earlier). */
export function parseFrameRange(text: string): FrameRangeSpec {
  const m = RANGE_RE.exec(text);
  if (!m) throw new RangeError(`bad frame range "${text}": use "N", "A-B" or "A-BxSTEP"`);
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : Number(m[2]);
  const step = m[3] === undefined ? 1 : Number(m[3]);
  if (end < start || step < 1 || end > MAX_FRAME) {
    throw new RangeError(`bad frame range "${text}": it must go upwards within 0-${MAX_FRAME}, step >= 1`);
  }
  return { start, end, step };
}

export interface Selection {
  /** Merged plain intervals [first, last], sorted, disjoint and not touching. */
  intervals: [number, number][];
  /** Stepped ranges no interval covers, merged per step and residue (see mergeStepped). */
  stepped: FrameRangeSpec[];
  /** Distinct frames selected, exact. */
  count: number;
}

function mergeIntervals(plain: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (const [a, b] of [...plain].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * Stepped ranges with the same step and the same residue (start modulo step) are intervals of
 * one progression: merged like plain intervals, so "0-1048574x2", "2-1048574x2", ... cost one
 * walk, not a hundred.
 */
function mergeStepped(specs: readonly FrameRangeSpec[]): FrameRangeSpec[] {
  const groups = new Map<string, [number, number][]>();
  for (const r of specs) {
    const key = `${r.step}:${r.start % r.step}`;
    const last = r.start + Math.floor((r.end - r.start) / r.step) * r.step;
    // As indices of the progression, so neighbouring ranges touch at +1.
    const g = groups.get(key) ?? [];
    g.push([Math.floor(r.start / r.step), Math.floor(last / r.step)]);
    groups.set(key, g);
  }
  const out: FrameRangeSpec[] = [];
  for (const [key, idx] of groups) {
    const [step, residue] = key.split(':').map(Number) as [number, number];
    for (const [a, b] of mergeIntervals(idx)) out.push({ start: a * step + residue, end: b * step + residue, step });
  }
  return out;
}

function inIntervals(intervals: readonly [number, number][], f: number): boolean {
  let lo = 0;
  let hi = intervals.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = intervals[mid]!;
    if (f < a) hi = mid - 1;
    else if (f > b) lo = mid + 1;
    else return true;
  }
  return false;
}

const onStep = (r: FrameRangeSpec, f: number) => f >= r.start && f <= r.end && (f - r.start) % r.step === 0;

/** The union of parsed ranges. */
export function selectFrames(specs: readonly FrameRangeSpec[]): Selection {
  const intervals = mergeIntervals(specs.filter((r) => r.step === 1 || r.start === r.end).map((r) => [r.start, r.end]));
  const covered = (r: FrameRangeSpec) => intervals.some(([a, b]) => a <= r.start && r.end <= b);
  const stepped = mergeStepped(specs.filter((r) => r.step > 1 && r.start !== r.end && !covered(r)));
  let count = intervals.reduce((n, [a, b]) => n + b - a + 1, 0);
  if (stepped.length > 0) {
    // Progressions of different steps may overlap each other and the intervals: counted on a
    // bitmap of the frame space (1 MiB), each merged progression walked once.
    const marks = markFrames({ intervals, stepped, count });
    count = 0;
    for (let i = 0; i < marks.length; i++) count += marks[i]!;
  }
  return { intervals, stepped, count };
}

/** The selection as a bitmap of the frame space (1 = selected). */
export function markFrames(sel: Selection): Uint8Array {
  const marks = new Uint8Array(MAX_FRAME + 1);
  for (const [a, b] of sel.intervals) marks.fill(1, a, b + 1);
  for (const r of sel.stepped) for (let f = r.start; f <= r.end; f += r.step) marks[f] = 1;
  return marks;
}

/** True when the selection holds frame `f`. */
export function selects(sel: Selection, f: number): boolean {
  return inIntervals(sel.intervals, f) || sel.stepped.some((r) => onStep(r, f));
}

/**
 * The selection split by a job's frames: `inside` lists the selected frames of `own` (sorted,
 * distinct, in its order); the rest are counted exactly, the lowest `named` of them listed.
 * Cost: the ranges, `own` and `named`, never the frame space.
 */
export function splitSelection(
  sel: Selection,
  own: readonly number[],
  named: number,
): { inside: number[]; outsideCount: number; outsideFirst: number[] } {
  const inside = own.filter((f) => selects(sel, f));
  const mine = new Set(own);
  // The lowest `named` outside frames of each interval and progression hold the lowest of all.
  const firsts: number[] = [];
  const walk = (start: number, end: number, step: number) => {
    let n = 0;
    for (let f = start; f <= end && n < named; f += step) {
      if (!mine.has(f)) {
        firsts.push(f);
        n++;
      }
    }
  };
  for (const [a, b] of sel.intervals) walk(a, b, 1);
  for (const r of sel.stepped) walk(r.start, r.end, r.step);
  const outsideFirst = [...new Set(firsts)].sort((x, y) => x - y).slice(0, named);
  return { inside, outsideCount: sel.count - inside.length, outsideFirst };
}
