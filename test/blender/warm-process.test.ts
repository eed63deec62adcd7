// The warm render loop (render_loop.py driven by warm-process.ts) against the real Blender: it
// writes exactly the files and progress lines of a `-s -e -a` chunk, runs of frames in any order; keeps
// Cycles' data between frames only with persistent data; and when Blender crashes, hangs or is
// canceled, fails only the frame in progress and hands the queued ones back.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BlenderCanceledError,
  BlenderCrashError,
  BlenderExitError,
  BlenderTimeoutError,
  FrameNotStartedError,
} from '../../blender/errors.js';
import { BlenderLogParser } from '../../blender/render/progress-parser.js';
import { renderInvocation, warmInvocation } from '../../blender/render/render-invocation.js';
import type { RenderSettings } from '../../blender/render/render-settings.js';
import { WarmBlender, type FrameRun } from '../../blender/render/warm-process.js';
import { parseLoopLine } from '../../blender/render/loop-lines.js';
import { runBlender } from '../../blender/run.js';
import type { BlenderLimits } from '../../blender/run-watch.js';
import { buildFixture, type FixtureName } from '../helpers/fixtures.js';
import { filesUnder, waitUntil } from '../helpers/e2e.js';
import { makeRenderDirs, type RenderDirs } from './render-dirs.js';
import { renderWarm, startWarm, WARM_LIMITS } from './warm-render.js';

const BLENDER = process.env.RENDERBRIDGE_TEST_BLENDER ?? 'blender';
const FRAME = WARM_LIMITS;
let work: string;
const started: WarmBlender[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'rb-warm-'));
});
afterAll(async () => {
  for (const w of started) w.kill();
  await Promise.all(started.map((w) => w.ended));
  await rm(work, { recursive: true, force: true });
});

/** A fresh folder with frames/ and composite/ and the settings file for them. */
async function dirsFor(name: string, extra: Partial<RenderSettings> = {}): Promise<RenderDirs> {
  const d = await makeRenderDirs(join(work, name));
  const settings: RenderSettings = {
    schemaVersion: 1,
    device: { type: 'CPU' },
    colorManagement: 'default',
    addons: { ids: [], paths: [] },
    compositeDir: d.composite,
    compositeFolders: { FileOut: 'FileOut' },
    resolution: [64, 48],
    samples: 4,
    ...extra,
  };
  await writeFile(d.settingsFile, JSON.stringify(settings));
  return d;
}

/** The warm loop's invocation for a scene rendered into `d`. */
const loopOf = (scene: string, d: RenderDirs) => ({
  binary: BLENDER,
  sceneFile: scene,
  settingsFile: d.settingsFile,
  attemptDir: d.frames,
});

/** A warm Blender the file's afterAll kills if a test leaves it running. */
function warm(scene: string, d: RenderDirs): WarmBlender {
  const w = startWarm(loopOf(scene, d), d.dir);
  started.push(w);
  return w;
}

/** One frame as a run. */
const one = (frame: number): FrameRun => ({ start: frame, end: frame, step: 1 });

/** Renders `runs` in one warm Blender, queued at once; each frame's lines and the order frames were done in. */
const renderLoop = (scene: string, d: RenderDirs, runs: FrameRun[]) => renderWarm(loopOf(scene, d), d.dir, runs);

describe('the warm loop renders what -a renders', () => {
  it.each(['basic', 'stereo', 'compositor'] as FixtureName[])(
    '%s: the same files, runs handed over out of order, and per-frame progress lines',
    async (fixture) => {
      const scene = await buildFixture(fixture);
      const chunk = await dirsFor(`${fixture}-chunk`);
      const res = await runBlender({
        ...renderInvocation({
          binary: BLENDER,
          sceneFile: scene,
          settingsFile: chunk.settingsFile,
          attemptDir: chunk.frames,
          chunk: { start: 1, end: 5, step: 1 },
        }),
        cwd: chunk.dir,
        timeoutMs: 120_000,
      });
      expect(res.exitCode).toBe(0);
      const loop = await dirsFor(`${fixture}-warm`);
      // Frame 5 alone, then frames 1 and 3 in one render call (step 2), then 2 and 4.
      const { lines, done } = await renderLoop(scene, loop, [
        one(5),
        { start: 1, end: 3, step: 2 },
        { start: 2, end: 4, step: 2 },
      ]);
      expect(done).toEqual([5, 1, 3, 2, 4]);

      const cameraFiles = await filesUnder(loop.frames);
      expect(cameraFiles.length).toBeGreaterThanOrEqual(5);
      expect(cameraFiles).toEqual(await filesUnder(chunk.frames));
      expect(await filesUnder(loop.composite)).toEqual(await filesUnder(chunk.composite));
      if (fixture === 'stereo') expect(cameraFiles).toContain('f_0001_L.png');
      if (fixture === 'compositor')
        expect(await filesUnder(loop.composite)).toContain(join('FileOut', 'beauty_0002.png'));
      for (const [frame, own] of lines) {
        // Each frame's lines are Blender's own for that frame: it starts, saves its files, finishes.
        const events = new BlenderLogParser().lines(own.join('\n'));
        expect(events.filter((e) => e.type === 'frameStarted')).toEqual([{ type: 'frameStarted', frame }]);
        expect(
          events.filter((e) => e.type === 'frameFinished').map((e) => e.type === 'frameFinished' && e.frame),
        ).toEqual([frame]);
        const saved = events.filter((e) => e.type === 'saved');
        const ofFrame = [...cameraFiles, ...(await filesUnder(loop.composite))].filter((f) =>
          f.includes(String(frame).padStart(4, '0')),
        );
        expect(saved).toHaveLength(ofFrame.length);
        expect(own.every((l) => !parseLoopLine(l))).toBe(true);
      }
    },
    120_000,
  );
});

describe('persistent data', () => {
  /** Frames whose lines show Cycles building the scene's BVH (only the camera moves in this scene). */
  async function bvhBuilds(persistentData: boolean): Promise<number[]> {
    const d = await dirsFor(`persistent-${persistentData}`, { persistentData });
    const { lines } = await renderLoop(await buildFixture('monkeys', { args: ['1', '4'] }), d, [
      one(1),
      { start: 2, end: 3, step: 1 },
    ]);
    return [...lines].filter(([, own]) => own.some((l) => l.includes('| Building BVH'))).map(([f]) => f);
  }

  it("keeps Cycles' scene between frames when the job asks for it, and rebuilds it per frame when not", async () => {
    expect(await bvhBuilds(true)).toEqual([1]);
    expect(await bvhBuilds(false)).toEqual([1, 2, 3]);
  }, 120_000);
});

describe('when things go wrong', () => {
  /**
   * 64x48 at this many samples takes seconds here, and Cycles prints nothing between its first and last sample lines.
   */
  const SLOW = { samples: 20_000 };

  it('a crash fails the frame in progress with the signal and last lines; the queued one is handed back', async () => {
    const d = await dirsFor('crash', SLOW);
    const w = warm(await buildFixture('basic'), d);
    await w.ready;
    let begun = false;
    const first = w.render({ run: one(1), limits: FRAME, onBegin: () => (begun = true) });
    const second = w.render({ run: one(2), limits: FRAME });
    await waitUntil('frame 1 to begin', () => begun, { timeoutMs: 30_000, intervalMs: 20 });
    process.kill(w.pid!, 'SIGKILL');
    const err = await first.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BlenderCrashError);
    expect((err as BlenderCrashError).details).toMatchObject({ signal: 'SIGKILL' });
    expect(((err as BlenderCrashError).details.lastLines as string[]).some((l) => l.startsWith('Fra:1 '))).toBe(true);
    await expect(second).rejects.toBeInstanceOf(FrameNotStartedError);
    expect(w.alive).toBe(false);
    // A frame handed over afterwards is refused the same way, for a new process to take.
    await expect(w.render({ run: one(3), limits: FRAME })).rejects.toBeInstanceOf(FrameNotStartedError);
  }, 120_000);

  it('a frame that prints nothing for its idle limit is a hang: the process is stopped', async () => {
    const d = await dirsFor('hang', SLOW);
    const w = warm(await buildFixture('basic'), d);
    await w.ready;
    const hung = w.render({ run: one(1), limits: { totalMs: 0, idleMs: 1500 } });
    const next = w.render({ run: one(2), limits: FRAME });
    const err = await hung.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BlenderTimeoutError);
    expect((err as BlenderTimeoutError).details).toMatchObject({ reason: 'idle' });
    await expect(next).rejects.toBeInstanceOf(FrameNotStartedError);
    await w.ended;
    expect(w.alive).toBe(false);
  }, 120_000);

  it('waiting for the next frame is no hang: limits only run while a frame renders', async () => {
    const d = await dirsFor('idle-wait');
    const w = WarmBlender.start({
      invocation: warmInvocation({
        binary: BLENDER,
        sceneFile: await buildFixture('basic'),
        settingsFile: d.settingsFile,
        attemptDir: d.frames,
      }),
      cwd: d.dir,
      loadLimits: { totalMs: 120_000, idleMs: 60_000 },
    });
    started.push(w);
    await w.ready;
    let armed: BlenderLimits | undefined;
    await w.render({ run: one(1), limits: { totalMs: 60_000, idleMs: 30_000 }, onBegin: () => (armed = w.limits) });
    // The frame's limits ran while it rendered and are off now that Blender waits: no time spent
    // waiting counts (test/blender/run-watch.test.ts shows that limits of 0 never fire).
    expect(armed).toEqual({ totalMs: 60_000, idleMs: 30_000 });
    expect(w.limits).toEqual({ totalMs: 0, idleMs: 0 });
    expect(w.alive).toBe(true);
    await w.render({ run: one(2), limits: FRAME });
    w.quit();
    expect(await w.ended).toMatchObject({ exitCode: 0 });
  }, 120_000);

  it('canceling the frame in progress stops the process at once; a canceled queued frame is only dropped', async () => {
    const d = await dirsFor('cancel', SLOW);
    const w = warm(await buildFixture('basic'), d);
    await w.ready;
    const queued = new AbortController();
    const current = new AbortController();
    let begun = false;
    const first = w.render({ run: one(1), limits: FRAME, signal: current.signal, onBegin: () => (begun = true) });
    const second = w.render({ run: one(2), limits: FRAME, signal: queued.signal });
    queued.abort();
    await expect(second).rejects.toBeInstanceOf(BlenderCanceledError);
    expect(w.alive).toBe(true);
    await waitUntil('frame 1 to begin', () => begun, { timeoutMs: 30_000, intervalMs: 20 });
    const t0 = Date.now();
    current.abort();
    await expect(first).rejects.toBeInstanceOf(BlenderCanceledError);
    await w.ended;
    // SIGTERM at the cancel, not the SIGKILL after the 2 s grace (room for a busy machine).
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(w.alive).toBe(false);
  }, 120_000);

  it('a setup error (no such camera) ends the load with exit code 3 and the error in the last lines', async () => {
    const d = await dirsFor('bad-camera', { camera: 'NoSuchCamera' });
    const w = warm(await buildFixture('basic'), d);
    const err = await w.ready.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BlenderExitError);
    expect((err as BlenderExitError).details.exitCode).toBe(3);
    expect(
      ((err as BlenderExitError).details.lastLines as string[]).some((l) =>
        l.includes("RB_SETUP_ERROR: camera 'NoSuchCamera' not found"),
      ),
    ).toBe(true);
    await expect(w.render({ run: one(1), limits: FRAME })).rejects.toBeInstanceOf(FrameNotStartedError);
  }, 120_000);
});
