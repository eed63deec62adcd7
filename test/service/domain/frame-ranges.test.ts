import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkArgs } from '../../../blender/render/render-invocation.js';
import {
  chunkFrames,
  countFrames,
  guidedChunks,
  expandFrameRanges,
  formatFrameRanges,
  frameRuns,
  remainingChunk,
  sceneFrames,
  type FrameChunk,
} from '../../../service/domain/frame-ranges.js';
import { MAX_FRAME, parseFrameRange, selectFrames, splitSelection } from '../../../service/domain/frame-selection.js';

/** Every chunk must be exactly what `-s start -e end -j step -a` renders. */
function expectRenderable(chunk: FrameChunk): void {
  const frames: number[] = [];
  for (let f = chunk.start; f <= chunk.end; f += chunk.step) frames.push(f);
  expect(chunk.frames).toEqual(frames);
}

describe('frame ranges', () => {
  it('parses the three spec forms', () => {
    expect(parseFrameRange('5')).toEqual({ start: 5, end: 5, step: 1 });
    expect(parseFrameRange('1-10')).toEqual({ start: 1, end: 10, step: 1 });
    expect(parseFrameRange('1-20x2')).toEqual({ start: 1, end: 20, step: 2 });
  });

  it.each(['', '10-1', '1-5x0', 'a', '1-2-3', '-5', '1-2000000'])('refuses %j', (text) => {
    expect(() => parseFrameRange(text)).toThrow(RangeError);
  });

  it('expands several ranges into a sorted list without duplicates', () => {
    expect(expandFrameRanges(['8-10', '1-20x5', '5', '9'])).toEqual([1, 5, 6, 8, 9, 10, 11, 16]);
    expect(expandFrameRanges(['1-20x2'])).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
  });

  it('bounds the number of frames', () => {
    expect(() => expandFrameRanges(['0-1000'], 100)).toThrow(/more than 100/);
  });

  it('takes the scene range when the job names none', () => {
    expect(sceneFrames([1, 5])).toEqual([1, 2, 3, 4, 5]);
    expect(sceneFrames([1, 9], 4)).toEqual([1, 5, 9]);
    expect(sceneFrames([5, 1])).toEqual([]);
  });

  it('round-trips through compact ranges', () => {
    expect(formatFrameRanges([1, 2, 3, 5, 7, 9, 20])).toEqual(['1-3', '5-9x2', '20']);
    const frames = expandFrameRanges(['1-100x3', '200-210', '7']);
    expect(expandFrameRanges(formatFrameRanges(frames))).toEqual(frames);
  });
});

describe('chunkFrames', () => {
  it('splits mixed steps into runs Blender can render with -s/-e/-j', () => {
    const runs = frameRuns([1, 2, 3, 5, 7, 9, 20]);
    expect(runs.map((r) => [r.start, r.end, r.step])).toEqual([
      [1, 3, 1],
      [5, 9, 2],
      [20, 20, 1],
    ]);
    runs.forEach(expectRenderable);
  });

  it('gives every slot work when there are enough frames', () => {
    const chunks = chunkFrames(expandFrameRanges(['1-100']), { slots: 4 });
    expect(chunks).toHaveLength(4);
    expect(chunks.map((c) => c.frames.length)).toEqual([25, 25, 25, 25]);
    chunks.forEach(expectRenderable);
    expect(chunkArgs(chunks[1] as FrameChunk)).toEqual(['-s', '26', '-e', '50', '-j', '1', '-a']);
  });

  it('keeps chunks at least minChunk long when frames are few (a Blender start costs ~1.6 s)', () => {
    const chunks = chunkFrames(expandFrameRanges(['1-12']), { slots: 4, minChunk: 8 });
    expect(chunks.map((c) => c.frames.length)).toEqual([6, 6]);
    expect(chunkFrames([1, 2, 3], { slots: 8 })).toHaveLength(1);
  });

  it('caps chunks at maxChunk on long jobs and balances the pieces', () => {
    const chunks = chunkFrames(expandFrameRanges(['1-1000']), { slots: 2, maxChunk: 60 });
    expect(chunks).toHaveLength(17);
    const sizes = chunks.map((c) => c.frames.length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    expect(chunks.flatMap((c) => c.frames)).toEqual(expandFrameRanges(['1-1000']));
  });

  it('keeps each step within its own chunk', () => {
    const frames = expandFrameRanges(['1-40x2', '100-140']);
    const chunks = chunkFrames(frames, { slots: 4, minChunk: 5 });
    chunks.forEach(expectRenderable);
    expect(chunks.flatMap((c) => c.frames)).toEqual(frames);
    expect(new Set(chunks.map((c) => c.step))).toEqual(new Set([1, 2]));
  });

  it('handles empty and single-frame jobs', () => {
    expect(chunkFrames([], { slots: 2 })).toEqual([]);
    expect(chunkFrames([42], { slots: 2 })).toEqual([{ start: 42, end: 42, step: 1, frames: [42] }]);
  });
});

describe('remainingChunk', () => {
  const chunk: FrameChunk = { start: 1, end: 19, step: 2, frames: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19] };

  it('retries only the frames after a crash', () => {
    expect(remainingChunk(chunk, [1, 3, 5])).toEqual([
      { start: 7, end: 19, step: 2, frames: [7, 9, 11, 13, 15, 17, 19] },
    ]);
  });

  it('splits around frames done in the middle', () => {
    const left = remainingChunk(chunk, new Set([5, 7, 19]));
    expect(left.map((c) => [c.start, c.end, c.step])).toEqual([
      [1, 3, 2],
      [9, 17, 2],
    ]);
    left.forEach(expectRenderable);
  });

  it('is empty when everything is done', () => {
    expect(remainingChunk(chunk, chunk.frames)).toEqual([]);
  });
});

describe('guidedChunks', () => {
  const sizes = (frames: number[], opts: Parameters<typeof guidedChunks>[1]) =>
    guidedChunks(frames, opts).map((c) => c.frames.length);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  it('takes half of what is left per slot, at most maxChunk, ending in single frames', () => {
    expect(sizes(range(24), { slots: 1 })).toEqual([8, 8, 4, 2, 1, 1]);
    expect(sizes(range(120), { slots: 1 })).toEqual([...Array(14).fill(8), 4, 2, 1, 1]);
    expect(sizes(range(120), { slots: 1, maxChunk: 1 })).toEqual(Array(120).fill(1));
    // More slots: smaller chunks, and single frames at the end, at least one per slot.
    expect(sizes(range(12), { slots: 4 })).toEqual([2, 2, ...Array(8).fill(1)]);
    expect(sizes(range(48), { slots: 2 })).toEqual([8, 8, 8, 6, 5, 4, 3, 2, 1, 1, 1, 1]);
  });

  it("the farm's only slot gets maxChunk frames all along: no tail of single frames to finish with", () => {
    expect(sizes(range(24), { slots: 1, alone: true })).toEqual([8, 8, 8]);
    expect(sizes(range(20), { slots: 1, alone: true })).toEqual([8, 8, 4]);
    expect(sizes(range(20), { slots: 1, alone: true, maxChunk: 1 })).toEqual(Array(20).fill(1));
    // Still one run per chunk.
    expect(guidedChunks([...range(5), 10, 12, 14], { alone: true }).map((c) => [c.start, c.end, c.step])).toEqual([
      [1, 5, 1],
      [10, 14, 2],
    ]);
  });

  it('covers every frame once, in order, each chunk one same-step run', () => {
    const frames = [...expandFrameRanges(['1-40x2']), ...range(10).map((f) => f + 100)];
    const chunks = guidedChunks(frames, { slots: 2 });
    expect(chunks.flatMap((c) => c.frames)).toEqual(frames);
    for (const c of chunks) {
      const step = c.frames.length > 1 ? c.frames[1]! - c.frames[0]! : 1;
      expect(c).toMatchObject({ start: c.frames[0], end: c.frames.at(-1), step });
      expect(c.frames.every((f, i) => i === 0 || f - c.frames[i - 1]! === step)).toBe(true);
    }
    expect(guidedChunks([], { slots: 2 })).toEqual([]);
  });
});

describe('frame ranges as intervals', () => {
  /** The plain reading: every frame of every range, one by one. */
  const naive = (ranges: string[]) => {
    const set = new Set<number>();
    for (const r of ranges) {
      const { start, end, step } = parseFrameRange(r);
      for (let f = start; f <= end; f += step) set.add(f);
    }
    return [...set].sort((a, b) => a - b);
  };
  const range = fc
    .tuple(
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 0, max: 80 }),
      fc.integer({ min: 1, max: 7 }),
      fc.constantFrom('n', 'ab', 'abx'),
    )
    .map(([a, len, step, kind]) =>
      kind === 'n' ? `${a}` : kind === 'ab' ? `${a}-${a + len}` : `${a}-${a + len}x${step}`,
    );

  it('list and count exactly the frames the ranges select, whatever their overlaps', () => {
    fc.assert(
      fc.property(fc.array(range, { minLength: 1, maxLength: 12 }), (ranges) => {
        const want = naive(ranges);
        expect(expandFrameRanges(ranges)).toEqual(want);
        expect(countFrames(ranges)).toBe(want.length);
      }),
    );
  });

  it(
    'count 100 copies of the whole frame space as one interval, and refuse a selection over the limit before ' +
      'listing it',
    () => {
      const flood = Array.from({ length: 100 }, () => `0-${MAX_FRAME}`);
      expect(countFrames(flood)).toBe(MAX_FRAME + 1);
      expect(countFrames([...flood, `0-${MAX_FRAME}x3`, '5-9'])).toBe(MAX_FRAME + 1);
      expect(() => expandFrameRanges(flood, 1000)).toThrow(/more than 1000 frames/);
      expect(countFrames(['1-10x2', '2-10x2'])).toBe(10);
    },
  );

  it("split by a job's frames exactly as frame by frame, the lowest outside frames named", () => {
    fc.assert(
      fc.property(
        fc.array(range, { minLength: 1, maxLength: 12 }),
        fc.array(range, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 20 }),
        (ranges, job, named) => {
          const want = naive(ranges);
          const own = naive(job);
          const split = splitSelection(selectFrames(ranges.map(parseFrameRange)), own, named);
          expect(split.inside).toEqual(own.filter((f) => want.includes(f)));
          const outside = want.filter((f) => !own.includes(f));
          expect(split.outsideCount).toBe(outside.length);
          expect(split.outsideFirst).toEqual(outside.slice(0, named));
        },
      ),
    );
  });

  it('merge stepped ranges of one step and residue: 100 of them cost one walk', () => {
    const shifted = Array.from({ length: 100 }, (_, i) => `${2 * i}-${MAX_FRAME}x2`);
    const sel = selectFrames(shifted.map(parseFrameRange));
    expect(sel.stepped).toEqual([{ start: 0, end: MAX_FRAME, step: 2 }]);
    expect(sel.count).toBe(MAX_FRAME / 2 + 1);
    const split = splitSelection(sel, [1, 2, 3, 4], 3);
    expect(split).toEqual({ inside: [2, 4], outsideCount: MAX_FRAME / 2 + 1 - 2, outsideFirst: [0, 6, 8] });
  });
});
