// The warm render loop as the tests drive it: a WarmBlender started on a warm invocation (render_loop.py),
// runs of frames handed over at once, each frame's own lines and the order Blender finished them, then a
// quit that must end with exit code 0. Shared by warm-process.test.ts and the matrix's warm renders
// (render-runs.ts), so both read the loop the same way.
import { expect } from 'vitest';
import { warmInvocation } from '../../blender/render/render-invocation.js';
import { WarmBlender, type FrameRun } from '../../blender/render/warm-process.js';
import type { BlenderLimits } from '../../blender/run-watch.js';

/** The tests' limits for loading a scene and for one frame: two minutes, no idle limit. */
export const WARM_LIMITS: BlenderLimits = { totalMs: 120_000, idleMs: 0 };

/** What warmInvocation() takes: the binary, scene, settings file and the attempt's frame folder. */
export type WarmInvocationOptions = Parameters<typeof warmInvocation>[0];

/** Starts the warm loop in `cwd` with the tests' load limits and a 2 s kill grace. */
export function startWarm(opts: WarmInvocationOptions, cwd: string, onLine?: (line: string) => void): WarmBlender {
  return WarmBlender.start({
    invocation: warmInvocation(opts),
    cwd,
    loadLimits: WARM_LIMITS,
    killGraceMs: 2000,
    ...(onLine ? { onLine } : {}),
  });
}

export interface WarmRender {
  /** Each frame's own lines, from its RB_FRAME_BEGIN to its RB_FRAME_DONE. */
  lines: Map<number, string[]>;
  /** Frames in the order Blender finished them. */
  done: number[];
  /** Lines outside frames (load, setup). */
  side: string[];
}

/**
 * Renders `runs` in one warm Blender, all queued at once, then quits it and expects exit code 0. The process
 * is killed if anything fails on the way, so a failed test leaves no Blender behind.
 */
export async function renderWarm(opts: WarmInvocationOptions, cwd: string, runs: FrameRun[]): Promise<WarmRender> {
  const side: string[] = [];
  const w = startWarm(opts, cwd, (l) => side.push(l));
  try {
    await w.ready;
    const lines = new Map<number, string[]>();
    const done: number[] = [];
    await Promise.all(
      runs.map((run) =>
        w.render({
          run,
          limits: WARM_LIMITS,
          onBegin: (f) => lines.set(f, []),
          onLine: (f, l) => lines.get(f)!.push(l),
          onDone: (f) => done.push(f),
        }),
      ),
    );
    w.quit();
    expect(await w.ended).toMatchObject({ exitCode: 0 });
    return { lines, done, side };
  } finally {
    w.kill();
    await w.ended;
  }
}
