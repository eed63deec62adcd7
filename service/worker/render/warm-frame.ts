// A frame a warm Blender saved, kept: billed, its files (those Blender said it saved, and only
// those) moved into out/ and staged, counted, stored early as outputs, its statistics recorded and
// its thumbnail made. warm-render.ts runs this in frame order, off Blender's output.
import type { Logger } from 'pino';
import type { DeviceReport } from '../../../blender/render/device-report.js';
import type { BlenderLogParser } from '../../../blender/render/progress-parser.js';
import type { Task } from '../../ports/tasks.js';
import { filesOfFrame, finishedFrames, promoteSaved, type OutputLayout } from '../outputs/chunk-files.js';
import type { WorkerEnv } from '../runtime/env.js';
import { recordFrame } from './frame-recorder.js';
import type { JobRun } from './job-run.js';

/** The frame Blender is rendering, and what its lines said so far. */
export interface InFlight {
  frame: number;
  /** The progress tracker's id for it. */
  key: string;
  parser: BlenderLogParser;
  /** Files Blender printed `Saved:` for. */
  saved: string[];
  begunAt: number;
}

/** What keeping a frame needs from the warm render that saved it. */
export interface WarmFrameDone {
  env: WorkerEnv;
  job: JobRun;
  task: Task;
  log: Logger;
  frame: InFlight;
  /** Its render time. */
  ms: number;
  attempt: OutputLayout;
  /** Folders of out/ the process has made (promoteSaved). */
  madeDirs: Set<string>;
  /** The device the process really renders on (billed). */
  device: DeviceReport | undefined;
  lane: string;
  /** Bills a piece of the process's time at that device. */
  bill: (piece: string, ms: number, frame: number) => Promise<void>;
}

/** Keeps the frame; false (its chunk ended failed) when Blender did not write its camera files. */
export async function keepWarmFrame(d: WarmFrameDone): Promise<boolean> {
  const { job, task, log, frame: c, ms } = d;
  await d.bill(`f${c.frame}-a${task.attempts}`, ms, c.frame);
  // The files Blender said it saved, and only those, move into out/ (no listing of folders per frame).
  const moved = await promoteSaved(d.attempt, job.out, c.saved, d.madeDirs);
  const camera = filesOfFrame(job.final, c.frame).filter((f) => f.kind === 'camera');
  const have = new Set(moved.filter((m) => m.kind === 'camera').map((m) => m.relativePath));
  const done =
    camera.length > 0 &&
    (camera.every((f) => have.has(f.relativePath)) ||
      (await finishedFrames(job.final, job.out, [c.frame])).has(c.frame));
  if (!done) {
    job.tracker.chunkEnded(c.key, true);
    return false;
  }
  for (const area of ['frames', 'composite'] as const) {
    const rels = moved.filter((m) => (m.kind === 'camera') === (area === 'frames')).map((m) => m.relativePath);
    if (rels.length) await job.staging?.stage(job.out, area, rels);
  }
  job.tracker.apply(c.key, { type: 'frameFinished', frame: c.frame, seconds: ms / 1000 });
  job.tracker.chunkEnded(c.key, false);
  job.publish(log);
  // Stored as outputs now, so that finalize, after the last frame, has only the zips left to do.
  await job.early?.store(job.out, moved);
  const frame = {
    jobId: job.jobId,
    frame: c.frame,
    attempt: task.attempts,
    seconds: ms / 1000,
    memory: c.parser.frameMemory,
    device: d.device,
    lane: d.lane,
  };
  await recordFrame(d.env, { ...frame, plannedVersion: job.plan.blenderVersion }, log);
  job.thumbnail(c.frame, log);
  return true;
}
