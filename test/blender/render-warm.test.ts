// The warm render loop on every build of the matrix (3.4, 4.3, 5.2), as the worker runs it
// (render_loop.py through warm-process.ts): frame by frame, the files the worker expects and each
// frame's own progress and saved lines; persistent data keeps Cycles' scene between frames and runs.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { classifySavedPath } from '../../blender/render/render-invocation.js';
import { filesOfFrame } from '../../service/worker/outputs/chunk-files.js';
import { usableBuilds } from '../helpers/blender-builds.js';
import * as m from './matrix.js';
import { expected, plan, useRenderWork, warm, written, type Warm } from './render-runs.js';

useRenderWork();

describe.each(usableBuilds('render matrix').map((b) => [b.minor, b] as const))(
  'the warm loop on Blender %s',
  (_minor, build) => {
    const r = new Map<string, Warm>();
    const get = (key: string) => r.get(key)!;

    beforeAll(async () => {
      await m.pool([
        async () =>
          r.set(
            'warm',
            await warm(build, await plan(build, 'warm', 'compositor', '1-2'), [
              { start: 2, end: 2, step: 1 },
              { start: 1, end: 1, step: 1 },
            ]),
          ),
        async () =>
          r.set(
            'persistent',
            await warm(
              build,
              await plan(build, 'persistent', 'monkeys', '1-3', (s) => (s.persistentData = true), ['1', '4']),
              [
                { start: 1, end: 1, step: 1 },
                { start: 2, end: 3, step: 1 },
              ],
            ),
          ),
        async () =>
          r.set(
            'rebuilt',
            await warm(
              build,
              await plan(build, 'rebuilt', 'monkeys', '1-2', (s) => (s.persistentData = false), ['1', '4']),
              [{ start: 1, end: 2, step: 1 }],
            ),
          ),
      ]);
    }, 600_000);

    it('the warm loop writes the same files frame by frame, each with its own progress and saved lines', async () => {
      const { job, lines, done } = get('warm');
      expect(done).toEqual([2, 1]);
      const files = await written(job);
      // The files the worker expects, as a chunk writes them (render-matrix.test.ts).
      expect(files).toEqual(expected(job, [1, 2]));
      for (const f of files) expect(m.pngSize(join(job.dir, f)), f).toEqual([64, 48]);
      for (const frame of [1, 2]) {
        const events = m.eventsOf(lines.get(frame) ?? []);
        expect(m.framesStarted(events), `frame ${frame}`).toEqual([frame]);
        expect(m.framesFinished(events), `frame ${frame}`).toEqual([frame]);
        const saved = m
          .savedPaths(events)
          .map((p) => classifySavedPath(p, { attemptDir: job.frames, compositeDir: job.composite }).relativePath);
        expect(saved.sort()).toEqual(
          filesOfFrame(job.final, frame)
            .map((e) => e.relativePath)
            .sort(),
        );
      }
    });

    it("persistent data keeps Cycles' scene between frames and runs; without it each frame rebuilds it", () => {
      const bvh = (w: Warm) =>
        [...w.lines].filter(([, own]) => own.some((l) => l.includes('| Building BVH'))).map(([f]) => f);
      expect(get('persistent').done).toEqual([1, 2, 3]);
      expect(bvh(get('persistent'))).toEqual([1]);
      expect(bvh(get('rebuilt'))).toEqual([1, 2]);
    });
  },
);
