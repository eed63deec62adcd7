import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobProgress } from '../../../shared/api/progress.js';
import { BlenderLogParser, parseTimecode, type ProgressEvent } from '../../../blender/render/progress-parser.js';
import { ProgressTracker } from '../../../service/worker/render/progress-tracker.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../../fixtures/logs', name), 'utf8');
const JOB = '8a1d3c2e-4b5f-4a6b-9c7d-0e1f2a3b4c5d';

describe('BlenderLogParser on a real Blender 3.4 Cycles log (frames 1-3, 4 samples)', () => {
  const events = new BlenderLogParser().lines(fixture('blender-3.4-cycles.txt'));

  it('reports each frame once: started, samples, saved, finished', () => {
    expect(events.map((e) => e.type)).toEqual(
      [1, 2, 3].flatMap(() => ['frameStarted', 'sample', 'sample', 'sample', 'saved', 'frameFinished']),
    );
    expect(events.slice(0, 6)).toEqual([
      { type: 'frameStarted', frame: 1 },
      { type: 'sample', frame: 1, done: 0, total: 4 },
      { type: 'sample', frame: 1, done: 1, total: 4 },
      { type: 'sample', frame: 1, done: 4, total: 4 },
      { type: 'saved', frame: 1, path: '/tmp/x/f_0001.png' },
      { type: 'frameFinished', frame: 1, seconds: 0.16 },
    ]);
    expect(events.filter((e) => e.type === 'saved').map((e) => (e as { path: string }).path)).toEqual([
      '/tmp/x/f_0001.png',
      '/tmp/x/f_0002.png',
      '/tmp/x/f_0003.png',
    ]);
  });
});

describe('BlenderLogParser on a real stereo log with a File Output node', () => {
  it('attributes unquoted compositor saves and quoted render saves to the frame, per view', () => {
    const events = new BlenderLogParser().lines(fixture('blender-3.4-stereo-fileoutput.txt'));
    expect(events.filter((e) => e.type === 'frameStarted')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'frameFinished').map((e) => (e as { frame: number }).frame)).toEqual([1, 2]);
    const saved = events.filter((e): e is Extract<ProgressEvent, { type: 'saved' }> => e.type === 'saved');
    expect(saved.filter((e) => e.frame === 1).map((e) => e.path)).toEqual([
      '/tmp/y/comp/beauty_0001_L.png',
      '/tmp/y/comp/mask0001_L.png',
      '/tmp/y/comp/beauty_0001_R.png',
      '/tmp/y/comp/mask0001_R.png',
      '/tmp/y/f_0001_L.png',
      '/tmp/y/f_0001_R.png',
    ]);
  });
});

describe('BlenderLogParser on other formats', () => {
  it('reads Blender 4.x and EEVEE sample lines', () => {
    const p = new BlenderLogParser();
    expect(
      p.line(
        'Fra:7 Mem:120.5M (Peak 130.1M) | Time:00:01.20 | Mem:0.00M, Peak:0.00M | Scene, ViewLayer | ' +
          'Rendering 1 / 4 samples',
      ),
    ).toEqual([
      { type: 'frameStarted', frame: 7 },
      { type: 'sample', frame: 7, done: 1, total: 4 },
    ]);
    expect(
      p.line(
        'Fra:7 Mem:120.5M (Peak 130.1M) | Time:00:02.20 | Remaining:00:00.50 | Mem:1.00M, Peak:1.00M | ' +
          'Scene, ViewLayer | Sample 64/128',
      ),
    ).toEqual([{ type: 'sample', frame: 7, done: 64, total: 128 }]);
    expect(p.line("Saved: 'C:\\renders\\f_0007.png'\r")).toEqual([
      { type: 'saved', frame: 7, path: 'C:\\renders\\f_0007.png' },
    ]);
    expect(p.line(' Time: 01:02:03.50 (Saving: 00:00.18)')).toEqual([
      { type: 'frameFinished', frame: 7, seconds: 3723.5 },
    ]);
    expect(p.currentFrame).toBeNull();
    // A failure report still names the frame reached (errorDetails.lastFrame), finished or not.
    expect(p.lastFrame).toBe(7);
    expect(new BlenderLogParser().lastFrame).toBeNull();
  });

  it('reports errors and warnings with the frame in flight', () => {
    const p = new BlenderLogParser();
    expect(p.line('Error: Build without OpenImageDenoiser')).toEqual([
      { type: 'error', frame: null, message: 'Build without OpenImageDenoiser' },
    ]);
    p.line('Fra:3 Mem:1M | Time:00:00.01 | Scene, ViewLayer | Synchronizing object | Cube');
    expect(p.line("Warning: Path '/x/tex.png' not found")).toEqual([
      { type: 'warning', frame: 3, message: "Path '/x/tex.png' not found" },
    ]);
    expect(p.line('Blender quit')).toEqual([]);
    expect(p.line('Read blend: "/job/project/a.blend"')).toEqual([]);
  });

  it('does not mistake the Time field of a Fra line or stray Time lines for a finished frame', () => {
    const p = new BlenderLogParser();
    expect(p.line(' Time: 00:00.27 (Saving: 00:00.18)')).toEqual([]);
    p.line('Fra:1 Mem:1M | Time:00:00.06 | Scene, ViewLayer | Sample 1/4');
    expect(p.line('Fra:1 Mem:1M | Time:00:00.08 | Scene, ViewLayer | Finished')).toEqual([]);
  });

  it('parses time codes', () => {
    expect(parseTimecode('00:00.27')).toBeCloseTo(0.27);
    expect(parseTimecode('01:00:00.00')).toBe(3600);
    expect(parseTimecode('x')).toBeNaN();
  });
});

describe('ProgressTracker', () => {
  function clock() {
    let t = Date.UTC(2025, 0, 1);
    return { now: () => t, tick: (ms: number) => (t += ms) };
  }

  it('folds the real log into counters, with an ETA from wall-clock frame time', () => {
    const c = clock();
    const tr = new ProgressTracker({ jobId: JOB, frames: [1, 2, 3, 4, 5, 6], slots: 2, now: c.now });
    expect(tr.snapshot('rendering')).toMatchObject({
      framesTotal: 6,
      framesDone: 0,
      percent: 0,
      etaSeconds: null,
      updatedAt: null,
    });
    const parser = new BlenderLogParser();
    let lastEventAt = 0;
    for (const line of fixture('blender-3.4-cycles.txt').split('\n')) {
      for (const ev of parser.line(line)) {
        tr.apply('chunk-a', ev);
        lastEventAt = c.now();
        if (ev.type === 'sample' && ev.frame === 3 && ev.done === 1) {
          const mid = tr.snapshot('rendering');
          expect(mid).toMatchObject({
            framesDone: 2,
            framesRendering: 1,
            currentFrame: 3,
            currentSample: 1,
            samplesTotal: 4,
          });
          expect(mid.percent).toBeCloseTo(((2 + 0.25) / 6) * 100, 1);
        }
      }
      c.tick(10);
    }
    const p = tr.snapshot('rendering');
    expect(JobProgress.parse(p)).toEqual(p);
    expect(p).toMatchObject({
      framesTotal: 6,
      framesDone: 3,
      framesRendering: 0,
      framesFailed: 0,
      currentFrame: null,
      percent: 50,
    });
    // 3 frames left, 2 slots, each frame took ~43 lines x 10 ms of wall clock.
    expect(tr.meanFrameSeconds).toBeGreaterThan(0.3);
    expect(p.etaSeconds).toBeCloseTo((3 * (tr.meanFrameSeconds as number)) / 2, 1);
    expect(p.updatedAt).toBe(new Date(lastEventAt).toISOString());
  });

  it('tracks concurrent chunks, failures and retries', () => {
    const c = clock();
    const tr = new ProgressTracker({ jobId: JOB, frames: [1, 2, 3, 4], slots: 2, now: c.now });
    tr.apply('a', { type: 'frameStarted', frame: 1 });
    tr.apply('b', { type: 'frameStarted', frame: 3 });
    tr.apply('b', { type: 'sample', frame: 3, done: 2, total: 4 });
    expect(tr.snapshot('rendering')).toMatchObject({
      framesRendering: 2,
      currentFrame: 3,
      currentSample: 2,
      samplesTotal: 4,
      percent: 12.5,
    });
    c.tick(2000);
    tr.apply('a', { type: 'frameFinished', frame: 1, seconds: 1.9 });
    tr.chunkEnded('b', true);
    let p = tr.snapshot('rendering');
    expect(p).toMatchObject({ framesDone: 1, framesRendering: 0, framesFailed: 1, currentFrame: null, percent: 25 });
    expect(p.etaSeconds).toBe(3); // 3 frames x 2 s over 2 slots
    tr.apply('b2', { type: 'frameStarted', frame: 3 });
    expect(tr.snapshot('rendering').framesFailed).toBe(0);
    c.tick(1000);
    tr.apply('b2', { type: 'frameFinished', frame: 3, seconds: 0 });
    p = tr.snapshot('rendering');
    expect(p).toMatchObject({ framesDone: 2, framesFailed: 0 });
    expect(tr.meanFrameSeconds).toBe(1.5);
    expect([...tr.doneFrames].sort()).toEqual([1, 3]);
  });

  it('never lets percent dip when stereo restarts samples per view, and ends at 100 with ETA 0', () => {
    const tr = new ProgressTracker({ jobId: JOB, frames: [1], doneFrames: [], now: () => 0 });
    tr.apply('a', { type: 'frameStarted', frame: 1 });
    tr.apply('a', { type: 'sample', frame: 1, done: 2, total: 2 });
    tr.apply('a', { type: 'sample', frame: 1, done: 1, total: 2 });
    expect(tr.snapshot('rendering').percent).toBe(100);
    tr.apply('a', { type: 'frameFinished', frame: 1, seconds: 0.5 });
    expect(tr.snapshot('finalizing')).toMatchObject({
      status: 'finalizing',
      framesDone: 1,
      percent: 100,
      etaSeconds: 0,
    });
    expect(tr.complete).toBe(true);
    expect(tr.meanFrameSeconds).toBe(0.5); // frozen clock: Blender's own figure is the fallback
  });

  it("keeps the next frame in flight when a frame's finish arrives after it started", () => {
    // The worker counts a frame once its files are moved, by then Blender may be on the next one.
    const tr = new ProgressTracker({ jobId: JOB, frames: [1, 2, 3], now: () => 0 });
    tr.apply('a', { type: 'frameStarted', frame: 1 });
    tr.apply('a', { type: 'frameStarted', frame: 2 });
    tr.apply('a', { type: 'frameFinished', frame: 1, seconds: 0.5 });
    tr.apply('a', { type: 'sample', frame: 2, done: 2, total: 4 });
    expect(tr.snapshot('rendering')).toMatchObject({
      framesDone: 1,
      framesRendering: 1,
      currentFrame: 2,
      currentSample: 2,
      percent: 50,
    });
    tr.chunkEnded('a', true);
    expect(tr.snapshot('rendering')).toMatchObject({ framesDone: 1, framesFailed: 1, framesRendering: 0 });
  });

  it('never lets percent step back while a finished frame waits for its files to be moved', () => {
    const tr = new ProgressTracker({ jobId: JOB, frames: [1, 2, 3, 4], now: () => 0 });
    tr.apply('a', { type: 'frameStarted', frame: 1 });
    tr.apply('a', { type: 'sample', frame: 1, done: 3, total: 4 });
    const before = tr.snapshot('rendering').percent!;
    expect(before).toBe(18.8);
    // Blender moves on to frame 2 before the worker has counted frame 1 as done.
    tr.apply('a', { type: 'frameStarted', frame: 2 });
    expect(tr.snapshot('rendering').percent).toBe(before);
    tr.apply('a', { type: 'frameFinished', frame: 1, seconds: 0.5 });
    tr.apply('a', { type: 'sample', frame: 2, done: 1, total: 4 });
    expect(tr.snapshot('rendering')).toMatchObject({ framesDone: 1, percent: 31.3 });
  });

  it('starts from frames already done and ignores frames outside the job', () => {
    const tr = new ProgressTracker({ jobId: JOB, frames: [1, 2], doneFrames: [1, 99], now: () => 0 });
    tr.apply('a', { type: 'frameFinished', frame: 50, seconds: 1 });
    tr.markFailed([2, 77]);
    expect(tr.snapshot('rendering')).toMatchObject({ framesDone: 1, framesFailed: 1, percent: 50 });
  });
});
